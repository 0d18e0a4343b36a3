from rgpu.entry import main

main()
