from alict_core.cli import main

raise SystemExit(main())
