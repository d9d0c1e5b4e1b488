// heaplab: the command-line tool (cli.cpp), with every family of this tree linked in
// (heaplab_link_families in tools/CMakeLists.txt).
#include "commands.hpp"

int main(int argc, char** argv) { return heaplab::cli::main(argc, argv); }
