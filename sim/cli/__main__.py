import sys

from matndp.sim.cli import main


sys.exit(main())
