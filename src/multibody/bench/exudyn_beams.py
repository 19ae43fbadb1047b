"""Peer models of elastic beams in Exudyn (https://github.com/jgerstmayr/EXUDYN): the ANCF cable of the same beams
as :mod:`multibody.systems.elastic`, built from Exudyn's own items.

* ``ObjectANCFCable2D`` elements (Gerstmayr's planar absolute-nodal-coordinate cable: cubic Hermite position
  interpolation over ``NodePoint2DSlope1`` nodes (position and slope vector), Euler–Bernoulli bending with EI, axial
  strain with EA) along the x axis; Exudyn's plane is x–y with gravity along −y, ours x–z with gravity along −z,
  so Exudyn's y is our z.
* :func:`exudyn_flexible_pendulum`: the root node's position held by two ``CoordinateConstraint`` (a pin), gravity by
  ``LoadMassProportional`` on every element, released from the horizontal at rest; Exudyn's ``GeneralizedAlpha``
  (implicit, spectral radius ``rho``) with fixed step; the tip node's position recorded by a ``SensorNode``.
* :func:`exudyn_cantilever_statics`: the root node's position and slope direction held (a clamp), a tip
  ``LoadForceVector``, solved by ``SolveStatic`` in ``load_steps`` increments.

The cable is extensible: ``EA`` (default 1e6, a strain of 1e-4 under these loads) approaches our inextensible
beams. ``cpu_seconds`` is the process time of Exudyn's solve alone (the model built and assembled before the clock
starts). Exudyn is an optional peer: imported inside the functions.
"""
import time

import numpy as np

__all__ = ["exudyn_flexible_pendulum", "exudyn_cantilever_statics"]


def _cable(elements, length, EI, mass_per_length, EA, g):
    try:
        import exudyn as exu
        from exudyn import itemInterface as ii
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"the Exudyn beam benchmarks need the 'exudyn' package (pip install exudyn): {exc}") from exc
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddNode(ii.NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    le = length / elements
    nodes = [mbs.AddNode(ii.NodePoint2DSlope1(referenceCoordinates=[k * le, 0.0, 1.0, 0.0]))
             for k in range(elements + 1)]
    for k in range(elements):
        cable = mbs.AddObject(ii.ObjectANCFCable2D(length=le, massPerLength=mass_per_length, bendingStiffness=EI,
                                                   axialStiffness=EA, nodeNumbers=[nodes[k], nodes[k + 1]]))
        if g:
            mass = mbs.AddMarker(ii.MarkerBodyMass(bodyNumber=cable))
            mbs.AddLoad(ii.LoadMassProportional(markerNumber=mass, loadVector=[0.0, -g, 0.0]))
    return exu, ii, mbs, ground, nodes


def _hold(mbs, ii, ground, node, coordinates):
    anchor = mbs.AddMarker(ii.MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    for c in coordinates:
        m = mbs.AddMarker(ii.MarkerNodeCoordinate(nodeNumber=node, coordinate=c))
        mbs.AddObject(ii.CoordinateConstraint(markerNumbers=[anchor, m]))


def _quiet(exu, settings):
    settings.timeIntegration.verboseMode = 0
    settings.staticSolver.verboseMode = 0
    settings.solution.file.write = False
    return settings


def exudyn_flexible_pendulum(elements=32, t_end=2.0, step_size=1e-3, length=2.0, EI=1.0, mass_per_length=1.0,
                             g=9.81, EA=1e6, rho=0.8, sample_period=0.01):
    """The flexible pendulum (module docstring): returns dict(t, tip (n, 2) — the tip's x and height —,
    cpu_seconds, steps)."""
    exu, ii, mbs, ground, nodes = _cable(elements, length, EI, mass_per_length, EA, g)
    _hold(mbs, ii, ground, nodes[0], (0, 1))
    sensor = mbs.AddSensor(ii.SensorNode(nodeNumber=nodes[-1], outputVariableType=exu.OutputVariableType.Position,
                                         storeInternal=True))
    mbs.Assemble()
    s = _quiet(exu, exu.SimulationSettings())
    ti = s.timeIntegration
    n = int(round(t_end / step_size))
    ti.numberOfSteps = n
    ti.endTime = n * step_size
    ti.generalizedAlpha.spectralRadius = float(rho)
    ti.newton.useModifiedNewton = True
    s.solution.sensors.writePeriod = float(sample_period)
    t0 = time.process_time()
    mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    cpu = time.process_time() - t0
    data = mbs.GetSensorStoredData(sensor)
    return dict(t=data[:, 0], tip=data[:, 1:3], cpu_seconds=cpu, steps=n)


def exudyn_cantilever_statics(elements=32, load=3.0, length=1.0, EI=1.0, EA=1e6, load_steps=10):
    """The cantilever clamped at x = 0 with the dead tip force −``load`` (Exudyn's −y): returns dict(tip (2,) — the
    tip's x and height —, cpu_seconds)."""
    exu, ii, mbs, ground, nodes = _cable(elements, length, EI, 1.0, EA, 0.0)
    _hold(mbs, ii, ground, nodes[0], (0, 1, 3))
    tip = mbs.AddMarker(ii.MarkerNodePosition(nodeNumber=nodes[-1]))
    mbs.AddLoad(ii.LoadForceVector(markerNumber=tip, loadVector=[0.0, -float(load), 0.0]))
    mbs.Assemble()
    s = _quiet(exu, exu.SimulationSettings())
    s.staticSolver.numberOfLoadSteps = int(load_steps)
    s.staticSolver.newton.relativeTolerance = 1e-10
    t0 = time.process_time()
    mbs.SolveStatic(s)
    cpu = time.process_time() - t0
    x, y = mbs.GetNodeOutput(nodes[-1], exu.OutputVariableType.Position)[:2]
    return dict(tip=np.array([x, y]), cpu_seconds=cpu)
