from leapgit.launch import main

main()
