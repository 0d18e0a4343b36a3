from rgpu.cli import main

main()
