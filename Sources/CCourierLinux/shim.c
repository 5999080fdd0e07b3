// The functions of CCourierLinux.h that need _GNU_SOURCE (setns, pipe2, accept4), which a
// header imported as a Clang module cannot define without changing how the system headers
// around it are read.
#ifdef __linux__
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include "CCourierLinux.h"

int ccourier_enter_network_namespace(int fd) { return setns(fd, CLONE_NEWNET); }

int ccourier_pipe_cloexec_nonblock(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

int ccourier_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }
#else
// Nothing to build on other platforms; a translation unit must not be empty.
typedef int ccourier_netlink_unused;
#endif
