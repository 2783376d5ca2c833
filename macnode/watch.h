/* watch.h: `macnode watch`, the link watcher of the bridge host (watch.c). */
#ifndef MACNODE_WATCH_H
#define MACNODE_WATCH_H

int macnode_watch(int argc, char **argv);

#endif
