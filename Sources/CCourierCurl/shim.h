// Typed wrappers for libcurl's variadic functions, which Swift cannot call directly: one
// wrapper per argument type that libcurl's documentation gives for an option.
#ifndef COURIER_CURL_SHIM_H
#define COURIER_CURL_SHIM_H

#include <curl/curl.h>

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

// MARK: Constants that are macros

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
