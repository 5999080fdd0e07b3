// Loads libcurl at run time and calls it through one table of function pointers; see
// CCourierCurl.h. The table is filled once (pthread_once) and never changes after, so every
// thread reads it without a lock once the first call has returned.
#include "CCourierCurl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/auxv.h>
#include <sys/eventfd.h>
#endif

// MARK: Loading

/// The names tried, in order, unless COURIER_LIBCURL names one: the runtime library's soname
/// (what FoundationNetworking links on Linux), then the development symlink.
#if defined(__APPLE__)
static const char *const candidates[] = {"/usr/lib/libcurl.4.dylib", "libcurl.4.dylib"};
#else
static const char *const candidates[] = {"libcurl.so.4", "libcurl.so"};
#endif
static const size_t candidateCount = sizeof candidates / sizeof candidates[0];

/// `CURLE_FAILED_INIT` and `CURLM_INTERNAL_ERROR`: what a call returns when libcurl is not
/// loaded.
#define COURIER_CURLE_FAILED_INIT 2
#define COURIER_CURLM_INTERNAL_ERROR 4

/// The oldest libcurl CourierCurl works with, as `version_num`: 7.68.0 (Ubuntu 20.04's), which
/// has every option and information Courier uses (before 7.85, transfers restrict protocols
/// with `CURLOPT_PROTOCOLS` instead of `CURLOPT_PROTOCOLS_STR`). An older one has every
/// function Courier loads, so only its version tells it apart before its transfers fail.
#define COURIER_CURL_MINIMUM_VERSION 0x074400u

static pthread_once_t loadOnce = PTHREAD_ONCE_INIT;
static struct courier_curl_functions table;
/// `&table` once libcurl is loaded and initialised; `NULL` otherwise.
static const struct courier_curl_functions *loaded;
static char loadFailure[1024];

/// Opens `path` and finds every function in `into`: 0, or -1 with the reason in `message`.
/// The library stays open on success (its handle is never closed).
static int openLibrary(
    const char *path, struct courier_curl_functions *into, char *message, size_t capacity) {
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    snprintf(message, capacity, "%s", reason != NULL ? reason : path);
    return -1;
  }
#define COURIER_CURL_FUNCTION(result, name, parameters)                                    \
  *(void **)&into->name = dlsym(library, #name);                                           \
  if (into->name == NULL) {                                                                \
    snprintf(message, capacity, "%s has no %s: it is not libcurl 7.68 or newer", path,     \
             #name);                                                                       \
    dlclose(library);                                                                      \
    return -1;                                                                             \
  }
#include "CourierCurlABI.def"
#undef COURIER_CURL_FUNCTION
  return 0;
}

/// COURIER_LIBCURL, or `NULL` in a process that runs with privileges its caller may not have
/// (set-user-ID, set-group-ID, file capabilities): there the dynamic loader ignores
/// `LD_PRELOAD` and `LD_LIBRARY_PATH`, and the environment must not choose a library to run
/// with those privileges either.
static const char *chosenLibrary(void) {
#if defined(__linux__)
  if (getauxval(AT_SECURE) != 0) return NULL;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
  if (issetugid()) return NULL;
#endif
  return getenv("COURIER_LIBCURL");
}

static void load(void) {
  // COURIER_LIBCURL names the one library to load instead (a path or a soname, for example
  // the GnuTLS flavour `libcurl-gnutls.so.4`); when it fails, nothing else is tried.
  const char *chosen = chosenLibrary();
  const char *const *names = candidates;
  size_t count = candidateCount;
  if (chosen != NULL && chosen[0] != 0) {
    names = &chosen;
    count = 1;
  }
  char reasons[768] = "";
  for (size_t index = 0; index < count; index++) {
    char reason[384];
    if (openLibrary(names[index], &table, reason, sizeof reason) == 0) {
      CURLcode code = table.curl_global_init(CURL_GLOBAL_ALL);
      if (code != CURLE_OK) {
        snprintf(loadFailure, sizeof loadFailure,
                 "libcurl was loaded from %s, but curl_global_init failed with CURLcode %u",
                 names[index], code);
        return;
      }
      const struct courier_curl_version_info *info = table.curl_version_info(CURLVERSION_FIRST);
      if (info == NULL || info->version_num < COURIER_CURL_MINIMUM_VERSION) {
        snprintf(loadFailure, sizeof loadFailure,
                 "%s is libcurl %s, older than 7.68.0, which CurlTransport needs; install a newer "
                 "libcurl or name one with COURIER_LIBCURL",
                 names[index],
                 info != NULL && info->version != NULL ? info->version : "of no version");
        return;
      }
      __atomic_store_n(&loaded, &table, __ATOMIC_RELEASE);
      return;
    }
    size_t used = strlen(reasons);
    snprintf(reasons + used, sizeof reasons - used, "%s%s", used > 0 ? "; " : "", reason);
  }
  snprintf(loadFailure, sizeof loadFailure,
           "libcurl could not be loaded (%s); install libcurl's runtime library "
           "(Debian and Ubuntu: libcurl4)%s",
           reasons, names == candidates ? "" : " or unset COURIER_LIBCURL");
}

/// The loaded table, or `NULL` when libcurl could not be loaded. Once it is loaded, one
/// acquire load: every libcurl call goes through here, a few dozen a request.
static inline const struct courier_curl_functions *curl(void) {
  const struct courier_curl_functions *ready = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
  if (ready != NULL) return ready;
  pthread_once(&loadOnce, load);
  return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

const char *courier_curl_load_failure(void) {
  return curl() != NULL ? NULL : loadFailure;
}

int courier_curl_try_load(const char *path, char *message, size_t capacity) {
  struct courier_curl_functions probe;
  if (capacity > 0) message[0] = 0;
  return openLibrary(path, &probe, message, capacity);
}

unsigned int courier_curl_version_num(void) {
  const struct courier_curl_functions *functions = curl();
  if (functions == NULL) return 0;
  const struct courier_curl_version_info *info = functions->curl_version_info(CURLVERSION_FIRST);
  return info != NULL ? info->version_num : 0;
}

// MARK: Easy handles

void *courier_curl_easy_init(void) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_easy_init() : NULL;
}

void courier_curl_easy_cleanup(void *easy) {
  const struct courier_curl_functions *functions = curl();
  if (functions != NULL) functions->curl_easy_cleanup(easy);
}

void courier_curl_easy_reset(void *easy) {
  const struct courier_curl_functions *functions = curl();
  if (functions != NULL) functions->curl_easy_reset(easy);
}

CURLcode courier_curl_easy_pause(void *easy, int bitmask) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_easy_pause(easy, bitmask) : COURIER_CURLE_FAILED_INIT;
}

const char *courier_curl_easy_strerror(CURLcode code) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_easy_strerror(code) : NULL;
}

/// One typed `curl_easy_setopt` wrapper.
#define COURIER_SETOPT(suffix, type)                                                       \
  CURLcode courier_curl_easy_setopt_##suffix(void *easy, CURLoption option, type value) {  \
    const struct courier_curl_functions *functions = curl();                               \
    return functions != NULL ? functions->curl_easy_setopt(easy, option, value)            \
                             : COURIER_CURLE_FAILED_INIT;                                  \
  }
COURIER_SETOPT(long, long)
COURIER_SETOPT(pointer, const void *)
COURIER_SETOPT(off_t, curl_off_t)
COURIER_SETOPT(write_callback, courier_curl_write_callback)
COURIER_SETOPT(read_callback, courier_curl_read_callback)
COURIER_SETOPT(seek_callback, courier_curl_seek_callback)
COURIER_SETOPT(xferinfo_callback, courier_curl_xferinfo_callback)
COURIER_SETOPT(opensocket_callback, courier_curl_opensocket_callback)
COURIER_SETOPT(closesocket_callback, courier_curl_closesocket_callback)
#undef COURIER_SETOPT

CURLcode courier_curl_easy_setopt_blob(
    void *easy, CURLoption option, const void *data, size_t length) {
  const struct courier_curl_functions *functions = curl();
  // libcurl copies the bytes before it returns, and never writes through `data`.
  struct courier_curl_blob blob = {(void *)data, length, CURL_BLOB_COPY};
  return functions != NULL ? functions->curl_easy_setopt(easy, option, &blob)
                           : COURIER_CURLE_FAILED_INIT;
}

/// One typed `curl_easy_getinfo` wrapper.
#define COURIER_GETINFO(suffix, type)                                                      \
  CURLcode courier_curl_easy_getinfo_##suffix(void *easy, CURLINFO info, type *value) {    \
    const struct courier_curl_functions *functions = curl();                               \
    return functions != NULL ? functions->curl_easy_getinfo(easy, info, value)             \
                             : COURIER_CURLE_FAILED_INIT;                                  \
  }
COURIER_GETINFO(long, long)
COURIER_GETINFO(off_t, curl_off_t)
COURIER_GETINFO(string, char *)
COURIER_GETINFO(socket, curl_socket_t)
#undef COURIER_GETINFO

// MARK: Multi handles

void *courier_curl_multi_init(void) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_multi_init() : NULL;
}

CURLMcode courier_curl_multi_cleanup(void *multi) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_multi_cleanup(multi) : COURIER_CURLM_INTERNAL_ERROR;
}

CURLMcode courier_curl_multi_add_handle(void *multi, void *easy) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_multi_add_handle(multi, easy)
                           : COURIER_CURLM_INTERNAL_ERROR;
}

CURLMcode courier_curl_multi_remove_handle(void *multi, void *easy) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_multi_remove_handle(multi, easy)
                           : COURIER_CURLM_INTERNAL_ERROR;
}

CURLMsg *courier_curl_multi_info_read(void *multi, int *messagesLeft) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_multi_info_read(multi, messagesLeft) : NULL;
}

CURLMcode courier_curl_multi_socket_action(
    void *multi, curl_socket_t socket, int events, int *running) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_multi_socket_action(multi, socket, events, running)
                           : COURIER_CURLM_INTERNAL_ERROR;
}

/// One typed `curl_multi_setopt` wrapper.
#define COURIER_MULTI_SETOPT(suffix, type)                                                 \
  CURLMcode courier_curl_multi_setopt_##suffix(void *multi, CURLMoption option, type value) { \
    const struct courier_curl_functions *functions = curl();                               \
    return functions != NULL ? functions->curl_multi_setopt(multi, option, value)          \
                             : COURIER_CURLM_INTERNAL_ERROR;                               \
  }
COURIER_MULTI_SETOPT(long, long)
COURIER_MULTI_SETOPT(pointer, void *)
#undef COURIER_MULTI_SETOPT

CURLMcode courier_curl_multi_setopt_socket_callback(
    void *multi, courier_curl_socket_callback callback) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL
             ? functions->curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback)
             : COURIER_CURLM_INTERNAL_ERROR;
}

CURLMcode courier_curl_multi_setopt_timer_callback(
    void *multi, courier_curl_timer_callback callback) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL
             ? functions->curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback)
             : COURIER_CURLM_INTERNAL_ERROR;
}

// MARK: Header lists

curl_slist *courier_curl_slist_append(curl_slist *list, const char *line) {
  const struct courier_curl_functions *functions = curl();
  return functions != NULL ? functions->curl_slist_append(list, line) : NULL;
}

void courier_curl_slist_free_all(curl_slist *list) {
  const struct courier_curl_functions *functions = curl();
  if (functions != NULL) functions->curl_slist_free_all(list);
}

// MARK: Waking the event loop

int courier_wake_open(int *reader, int *writer) {
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

void courier_wake_signal(int writer) {
  uint64_t one = 1;
  (void)!write(writer, &one, sizeof one);
}

void courier_wake_drain(int reader) {
  uint64_t buffer[8];
#if defined(__linux__)
  (void)!read(reader, buffer, sizeof buffer[0]);
#else
  while (read(reader, buffer, sizeof buffer) > 0) {
  }
#endif
}

void courier_wake_close(int reader, int writer) {
  close(reader);
  if (writer != reader) close(writer);
}
