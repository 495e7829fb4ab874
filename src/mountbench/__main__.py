from mountbench.cli.main import main

main()
