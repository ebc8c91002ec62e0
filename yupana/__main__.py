from yupana.cli import main

raise SystemExit(main())
