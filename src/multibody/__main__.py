import sys

from multibody.cli import main

sys.exit(main())
