from leapgit.cli import main

main()
