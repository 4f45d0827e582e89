from shimgen.cli import main

raise SystemExit(main())
