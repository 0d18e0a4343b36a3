"""What this machine has for compiling kernels: the pinned toolchains (`pins`), what rustup
has installed (`rustup`), and the other tools the codegens use (`tools`: ptxas, the CUDA
root, llvm-config, the system rustc). Build and doctor ask these modules, and only these, so
they cannot disagree about the machine."""
