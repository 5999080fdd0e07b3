// Typed wrappers for libcurl's variadic functions, which Swift cannot call directly: one
// wrapper per argument type that libcurl's documentation gives for an option.
#ifndef COURIER_CURL_SHIM_H
#define COURIER_CURL_SHIM_H

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/socket.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif

// MARK: curl_easy_setopt

static inline CURLcode courier_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode courier_curl_easy_setopt_pointer(
    CURL *handle, CURLoption option, const void *value) {
  return curl_easy_setopt(handle, option, value);
}

static inline CURLcode courier_curl_easy_setopt_off_t(
    CURL *handle, CURLoption option, curl_off_t value) {
  return curl_easy_setopt(handle, option, value);
}

/// `CURLOPT_WRITEFUNCTION` and `CURLOPT_HEADERFUNCTION`.
static inline CURLcode courier_curl_easy_setopt_write_callback(
    CURL *handle, CURLoption option, curl_write_callback callback) {
  return curl_easy_setopt(handle, option, callback);
}

/// `CURLOPT_READFUNCTION`.
static inline CURLcode courier_curl_easy_setopt_read_callback(
    CURL *handle, CURLoption option, curl_read_callback callback) {
  return curl_easy_setopt(handle, option, callback);
}

/// `CURLOPT_SEEKFUNCTION`.
static inline CURLcode courier_curl_easy_setopt_seek_callback(
    CURL *handle, CURLoption option, curl_seek_callback callback) {
  return curl_easy_setopt(handle, option, callback);
}

/// `CURLOPT_XFERINFOFUNCTION`.
static inline CURLcode courier_curl_easy_setopt_xferinfo_callback(
    CURL *handle, CURLoption option, curl_xferinfo_callback callback) {
  return curl_easy_setopt(handle, option, callback);
}

// MARK: Sockets that child processes do not inherit

/// libcurl's `CURLOPT_OPENSOCKETFUNCTION` for CourierCurl: the socket libcurl would open
/// (`socket(family, socktype, protocol)`, which libcurl 7.88 does without close-on-exec),
/// opened with `SOCK_CLOEXEC` where the system has it, so a process the application spawns
/// never inherits a connection. Returns `CURL_SOCKET_BAD` when `socket` fails.
static curl_socket_t courier_curl_open_socket(
    void *context, curlsocktype purpose, struct curl_sockaddr *address) {
  (void)context;
  (void)purpose;
#if defined(SOCK_CLOEXEC)
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
#else
  int descriptor = socket(address->family, address->socktype, address->protocol);
  if (descriptor >= 0) fcntl(descriptor, F_SETFD, FD_CLOEXEC);
  return descriptor;
#endif
}

/// Sets ``courier_curl_open_socket`` as the handle's `CURLOPT_OPENSOCKETFUNCTION`.
static inline CURLcode courier_curl_easy_open_sockets_close_on_exec(CURL *handle) {
  return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, courier_curl_open_socket);
}

// MARK: curl_easy_getinfo

static inline CURLcode courier_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode courier_curl_easy_getinfo_off_t(
    CURL *handle, CURLINFO info, curl_off_t *value) {
  return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode courier_curl_easy_getinfo_string(
    CURL *handle, CURLINFO info, char **value) {
  return curl_easy_getinfo(handle, info, value);
}

// MARK: curl_multi_setopt

static inline CURLMcode courier_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
  return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode courier_curl_multi_setopt_pointer(
    CURLM *multi, CURLMoption option, void *value) {
  return curl_multi_setopt(multi, option, value);
}

/// `CURLMOPT_SOCKETFUNCTION`.
static inline CURLMcode courier_curl_multi_setopt_socket_callback(
    CURLM *multi, curl_socket_callback callback) {
  return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}

/// `CURLMOPT_TIMERFUNCTION`.
static inline CURLMcode courier_curl_multi_setopt_timer_callback(
    CURLM *multi, curl_multi_timer_callback callback) {
  return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

/// `CURL_SOCKET_TIMEOUT`, the socket to pass `curl_multi_socket_action` when a timeout fired.
static const curl_socket_t courier_curl_socket_timeout = CURL_SOCKET_TIMEOUT;
/// `CURL_POLL_IN`, `CURL_POLL_OUT`, `CURL_POLL_REMOVE`: what the socket callback asks for.
static const int courier_curl_poll_in = CURL_POLL_IN;
static const int courier_curl_poll_out = CURL_POLL_OUT;
static const int courier_curl_poll_remove = CURL_POLL_REMOVE;
/// `CURL_CSELECT_IN`, `CURL_CSELECT_OUT`, `CURL_CSELECT_ERR`: what a socket is ready for.
static const int courier_curl_cselect_in = CURL_CSELECT_IN;
static const int courier_curl_cselect_out = CURL_CSELECT_OUT;
static const int courier_curl_cselect_err = CURL_CSELECT_ERR;

// MARK: Waking the event loop

/// Opens the descriptors that wake CourierCurl's loop thread from its `poll`: on Linux
/// one non-blocking `eventfd` (`*reader == *writer`), elsewhere a non-blocking pipe. Returns 0,
/// or -1 with `errno` set.
static inline int courier_wake_open(int *reader, int *writer) {
#if defined(__linux__)
  int descriptor = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (descriptor < 0) return -1;
  *reader = descriptor;
  *writer = descriptor;
  return 0;
#else
  int pair[2];
  if (pipe(pair) != 0) return -1;
  for (int i = 0; i < 2; i++) {
    fcntl(pair[i], F_SETFL, fcntl(pair[i], F_GETFL) | O_NONBLOCK);
    fcntl(pair[i], F_SETFD, FD_CLOEXEC);
  }
  *reader = pair[0];
  *writer = pair[1];
  return 0;
#endif
}

/// Makes the reader readable (one 8-byte `write`); never blocks.
static inline void courier_wake_signal(int writer) {
  uint64_t one = 1;
  (void)!write(writer, &one, sizeof one);
}

/// Makes the reader unreadable again: one `read` of an `eventfd` takes its whole count; a
/// pipe is read until it would block.
static inline void courier_wake_drain(int reader) {
  uint64_t buffer[8];
#if defined(__linux__)
  (void)!read(reader, buffer, sizeof buffer[0]);
#else
  while (read(reader, buffer, sizeof buffer) > 0) {
  }
#endif
}

/// Closes what `courier_wake_open` opened.
static inline void courier_wake_close(int reader, int writer) {
  close(reader);
  if (writer != reader) close(writer);
}

// MARK: Constants that are macros

/// The libcurl the process runs with, as `0xXXYYZZ` (`curl_version_info`'s `version_num`).
static inline unsigned int courier_curl_version_num(void) {
  return curl_version_info(CURLVERSION_NOW)->version_num;
}


/// `curl_global_init(CURL_GLOBAL_ALL)`; call it once per process (CourierCurl does, through a
/// lazily initialised global).
static inline CURLcode courier_curl_global_init(void) {
  return curl_global_init(CURL_GLOBAL_ALL);
}

/// `CURL_ERROR_SIZE`: the size of a `CURLOPT_ERRORBUFFER`.
static const int courier_curl_error_size = CURL_ERROR_SIZE;

/// `CURL_READFUNC_ABORT`: what a read callback returns to abort the transfer.
static const size_t courier_curl_readfunc_abort = CURL_READFUNC_ABORT;

/// `CURL_SEEKFUNC_OK` and `CURL_SEEKFUNC_FAIL`.
static const int courier_curl_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int courier_curl_seekfunc_fail = CURL_SEEKFUNC_FAIL;

#endif
