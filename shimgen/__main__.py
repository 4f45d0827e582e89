from shimgen.tools.cli import main

raise SystemExit(main())
