from mountbench.cli import main

main()
