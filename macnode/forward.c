/* forward.c: macnode-forward, the program a bridge-mode task becomes (the SPANK plug-in execs it on the
 * bridge host in the task's place): `macnode exec` and nothing else, so that a task's exec loads no more than
 * the forwarder needs. Its arguments and environment are macnode exec's (see exec.c). */
#include "config.h"
#include "exec.h"

int main(int argc, char **argv)
{
    return macnode_exec(argc, argv);
}
