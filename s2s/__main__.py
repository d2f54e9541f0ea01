from s2s.cli import main

raise SystemExit(main())
