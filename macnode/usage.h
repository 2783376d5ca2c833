/* usage.h: `macnode usage`, which root on the bridge host runs at a step's end (the reproducibility record):
 * the Mac's agent reports what the step's tasks used there (usage.c). */
#ifndef MACNODE_USAGE_H
#define MACNODE_USAGE_H

/* `macnode usage ...` with argv[0] = "usage". Returns the exit code. */
int macnode_usage(int argc, char **argv);

#endif
