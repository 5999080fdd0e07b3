// libcurl for CourierCurl, loaded at run time: the types and constants Courier uses (with
// libcurl's names), and one C function per libcurl call, typed where libcurl's is variadic
// (Swift cannot call a variadic function). Courier never includes <curl/curl.h> here, so it
// builds where only libcurl's runtime library is installed; CurlABICheck.c proves these
// declarations match libcurl's header wherever that header exists.
#ifndef COURIER_CCURL_H
#define COURIER_CCURL_H

#include "CourierCurlABI.h"

// MARK: libcurl's names for Courier's declarations

typedef courier_curl_code CURLcode;
typedef courier_curl_option CURLoption;
typedef courier_curl_info CURLINFO;
typedef courier_curl_multi_option CURLMoption;
typedef courier_curl_multi_code CURLMcode;
typedef courier_curl_message_kind CURLMSG;
typedef courier_curl_version CURLversion;
typedef courier_curl_socket curl_socket_t;
typedef courier_curl_off curl_off_t;
typedef struct courier_curl_slist curl_slist;
typedef struct courier_curl_message CURLMsg;

#define COURIER_CURL_CONSTANT(type, name, value) static const type name = value;
#include "CourierCurlABI.def"
#undef COURIER_CURL_CONSTANT

// MARK: Loading

/// Loads libcurl (`libcurl.so.4` on Linux, `libcurl.4.dylib` on Apple systems, or the one
/// library the environment variable `COURIER_LIBCURL` names, a path or a soname, except in a
/// set-user-ID, set-group-ID or file-capability process, which ignores it) and runs
/// `curl_global_init` once per process, on first use of any function below; returns `NULL`
/// when libcurl is ready, otherwise why it is not (which library, and the loader's reason, or
/// the library's version when it is older than 7.68.0, which Courier needs).
/// Every function below may be called before or without this one: each loads libcurl first,
/// and fails as libcurl would (`NULL`, `CURLE_FAILED_INIT`, `CURLM_INTERNAL_ERROR`) when it
/// could not be loaded.
const char *courier_curl_load_failure(void);

/// Tries to load libcurl from `path` into a table of its own, without touching the one the
/// functions below use: 0 when every function Courier needs was found, otherwise -1 with the
/// reason in `message` (at most `capacity` bytes, terminated).
int courier_curl_try_load(const char *path, char *message, size_t capacity);

/// 1 when this build compiled CurlABICheck.c against libcurl's <curl/curl.h> (the header was
/// found), 0 when it was not there to check against.
extern const int courier_curl_abi_checked;

/// The loaded libcurl's version as `0xXXYYZZ` (`curl_version_info`'s `version_num`); 0 when
/// libcurl could not be loaded.
unsigned int courier_curl_version_num(void);

// MARK: Easy handles

void *courier_curl_easy_init(void);
void courier_curl_easy_cleanup(void *easy);
void courier_curl_easy_reset(void *easy);
/// libcurl's text for `code`; `NULL` when libcurl is not loaded.
const char *courier_curl_easy_strerror(CURLcode code);

CURLcode courier_curl_easy_setopt_long(void *easy, CURLoption option, long value);
CURLcode courier_curl_easy_setopt_pointer(void *easy, CURLoption option, const void *value);
CURLcode courier_curl_easy_setopt_off_t(void *easy, CURLoption option, curl_off_t value);
/// `CURLOPT_WRITEFUNCTION` and `CURLOPT_HEADERFUNCTION`.
CURLcode courier_curl_easy_setopt_write_callback(
    void *easy, CURLoption option, courier_curl_write_callback callback);
/// `CURLOPT_READFUNCTION`.
CURLcode courier_curl_easy_setopt_read_callback(
    void *easy, CURLoption option, courier_curl_read_callback callback);
/// `CURLOPT_SEEKFUNCTION`.
CURLcode courier_curl_easy_setopt_seek_callback(
    void *easy, CURLoption option, courier_curl_seek_callback callback);
/// `CURLOPT_XFERINFOFUNCTION`.
CURLcode courier_curl_easy_setopt_xferinfo_callback(
    void *easy, CURLoption option, courier_curl_xferinfo_callback callback);
/// `CURLOPT_OPENSOCKETFUNCTION`.
CURLcode courier_curl_easy_setopt_opensocket_callback(
    void *easy, CURLoption option, courier_curl_opensocket_callback callback);
/// `CURLOPT_CLOSESOCKETFUNCTION`.
CURLcode courier_curl_easy_setopt_closesocket_callback(
    void *easy, CURLoption option, courier_curl_closesocket_callback callback);

/// Sets a `…_BLOB` option (`CURLOPT_SSLCERT_BLOB`, `CURLOPT_SSLKEY_BLOB`) to `length` bytes at
/// `data`, which libcurl copies (`CURL_BLOB_COPY`): the caller's bytes may go right after.
CURLcode courier_curl_easy_setopt_blob(
    void *easy, CURLoption option, const void *data, size_t length);

CURLcode courier_curl_easy_getinfo_long(void *easy, CURLINFO info, long *value);
CURLcode courier_curl_easy_getinfo_off_t(void *easy, CURLINFO info, curl_off_t *value);
CURLcode courier_curl_easy_getinfo_string(void *easy, CURLINFO info, char **value);
CURLcode courier_curl_easy_getinfo_socket(void *easy, CURLINFO info, curl_socket_t *value);
/// `curl_easy_pause`: `CURLPAUSE_CONT` resumes a transfer its write callback paused.
CURLcode courier_curl_easy_pause(void *easy, int bitmask);

// MARK: Multi handles

void *courier_curl_multi_init(void);
CURLMcode courier_curl_multi_cleanup(void *multi);
CURLMcode courier_curl_multi_add_handle(void *multi, void *easy);
CURLMcode courier_curl_multi_remove_handle(void *multi, void *easy);
CURLMsg *courier_curl_multi_info_read(void *multi, int *messagesLeft);
CURLMcode courier_curl_multi_socket_action(
    void *multi, curl_socket_t socket, int events, int *running);
CURLMcode courier_curl_multi_setopt_long(void *multi, CURLMoption option, long value);
CURLMcode courier_curl_multi_setopt_pointer(void *multi, CURLMoption option, void *value);
/// `CURLMOPT_SOCKETFUNCTION`.
CURLMcode courier_curl_multi_setopt_socket_callback(
    void *multi, courier_curl_socket_callback callback);
/// `CURLMOPT_TIMERFUNCTION`.
CURLMcode courier_curl_multi_setopt_timer_callback(
    void *multi, courier_curl_timer_callback callback);

// MARK: Header lists

curl_slist *courier_curl_slist_append(curl_slist *list, const char *line);
void courier_curl_slist_free_all(curl_slist *list);

// MARK: Waking the event loop

/// Opens the descriptors that wake CourierCurl's loop thread from its `poll`: on Linux
/// one non-blocking `eventfd` (`*reader == *writer`), elsewhere a non-blocking pipe. Returns 0,
/// or -1 with `errno` set.
int courier_wake_open(int *reader, int *writer);
/// Makes the reader readable (one 8-byte `write`); never blocks.
void courier_wake_signal(int writer);
/// Makes the reader unreadable again: one `read` of an `eventfd` takes its whole count; a
/// pipe is read until it would block.
void courier_wake_drain(int reader);
/// Closes what `courier_wake_open` opened.
void courier_wake_close(int reader, int writer);

#endif
