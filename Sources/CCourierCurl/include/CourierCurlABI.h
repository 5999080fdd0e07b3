// The types of libcurl's ABI (soname 4) that CourierCurl uses, declared by Courier itself so that
// Courier builds on a machine with libcurl's runtime library but without its development
// headers. Every name is Courier's own (`courier_curl_…`): the ABI check compiles this header
// beside libcurl's <curl/curl.h>, and CurlABICheck.c proves each type here compatible with
// libcurl's, each struct laid out as libcurl's, and each constant and function signature in
// CourierCurlABI.def equal to libcurl's.
#ifndef COURIER_CURL_ABI_H
#define COURIER_CURL_ABI_H

#include <stddef.h>
#include <sys/socket.h>

// MARK: Scalar types

/// `CURLcode`, `CURLoption`, `CURLINFO`, `CURLMoption`, `CURLMSG`, `curlsocktype` and
/// `CURLversion`: C enumerations without negative values, which the compiler stores as
/// `unsigned int`.
typedef unsigned int courier_curl_code;
typedef unsigned int courier_curl_option;
typedef unsigned int courier_curl_info;
typedef unsigned int courier_curl_multi_option;
typedef unsigned int courier_curl_message_kind;
typedef unsigned int courier_curl_socket_type;
typedef unsigned int courier_curl_version;
/// `CURLMcode`, which has a negative value (`CURLM_CALL_MULTI_PERFORM`): `int`.
typedef int courier_curl_multi_code;
/// `curl_socket_t` on every system but Windows: a file descriptor.
typedef int courier_curl_socket;
/// `curl_off_t`: 64 bits, `long` where that is 64 bits wide (as libcurl's system.h chooses).
#if defined(__LP64__) || defined(_LP64)
typedef long courier_curl_off;
#else
typedef long long courier_curl_off;
#endif

// MARK: Structures (only the leading fields Courier reads, where libcurl's is longer)

// CurlABISignatures.c names libcurl's own structures here instead (by defining these tags as
// libcurl's), so that it can compare function types that take or return them.
#ifndef COURIER_CURL_LIBCURL_STRUCTS

/// `struct curl_slist`: one line of a header list.
struct courier_curl_slist {
  char *data;
  struct courier_curl_slist *next;
};

/// `CURLMsg`: what `curl_multi_info_read` reports.
struct courier_curl_message {
  courier_curl_message_kind msg;
  void *easy_handle;
  union {
    void *whatever;
    courier_curl_code result;
  } data;
};

/// The leading fields of `curl_version_info_data`, present in every version of it.
struct courier_curl_version_info {
  courier_curl_version age;
  const char *version;
  unsigned int version_num;
};

/// `struct curl_blob`: bytes for a `…_BLOB` option (libcurl 7.71 and later).
struct courier_curl_blob {
  void *data;
  size_t len;
  unsigned int flags;
};

/// The leading fields of `struct curl_sockaddr`, what `CURLOPT_OPENSOCKETFUNCTION` is given.
struct courier_curl_sockaddr {
  int family;
  int socktype;
  int protocol;
  unsigned int addrlen;
};
#endif

// MARK: Callbacks

typedef size_t (*courier_curl_write_callback)(
    char *buffer, size_t size, size_t count, void *context);
typedef size_t (*courier_curl_read_callback)(
    char *buffer, size_t size, size_t count, void *context);
typedef int (*courier_curl_seek_callback)(void *context, courier_curl_off offset, int origin);
typedef int (*courier_curl_xferinfo_callback)(
    void *context, courier_curl_off downloadTotal, courier_curl_off downloaded,
    courier_curl_off uploadTotal, courier_curl_off uploaded);
typedef int (*courier_curl_socket_callback)(
    void *easy, courier_curl_socket socket, int what, void *context, void *socketContext);
typedef int (*courier_curl_timer_callback)(void *multi, long milliseconds, void *context);
typedef courier_curl_socket (*courier_curl_opensocket_callback)(
    void *context, courier_curl_socket_type purpose, struct courier_curl_sockaddr *address);
typedef int (*courier_curl_closesocket_callback)(void *context, courier_curl_socket socket);

// MARK: The functions, as loaded from the library

/// libcurl's functions, one pointer each, as `dlsym` found them.
struct courier_curl_functions {
#define COURIER_CURL_FUNCTION(result, name, parameters) result(*name) parameters;
#include "CourierCurlABI.def"
#undef COURIER_CURL_FUNCTION
};

#endif
