// Where libcurl's development headers exist, proves at compile time that every function
// Courier loads from libcurl (CourierCurlABI.def) and every callback type it hands libcurl
// has libcurl's signature. Courier's structure tags are mapped to libcurl's here, so that a
// function taking or returning one compares equal only if the rest of it does;
// CurlABICheck.c proves the structures themselves laid out alike.
#if __has_include(<curl/curl.h>)

#define CURL_DISABLE_TYPECHECK 1
// Deprecated options (CURLOPT_PROTOCOLS) are checked too, without a warning.
#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>

#define COURIER_CURL_LIBCURL_STRUCTS 1
#define courier_curl_slist curl_slist
#define courier_curl_message CURLMsg
#define courier_curl_version_info curl_version_info_data
#define courier_curl_sockaddr curl_sockaddr
#define courier_curl_blob curl_blob
#include "CourierCurlABI.h"

#define COURIER_CURL_TYPE(ours, theirs)                            \
  _Static_assert(__builtin_types_compatible_p(ours, theirs),      \
                 #ours " is not compatible with <curl/curl.h>'s " #theirs);
#include "CourierCurlABI.def"
#undef COURIER_CURL_TYPE

#define COURIER_CURL_FUNCTION(result, name, parameters)                                  \
  _Static_assert(__builtin_types_compatible_p(                                           \
                     __typeof__(&name), __typeof__(((struct courier_curl_functions *)0)->name)), \
                 "Courier's " #name " differs from the signature in <curl/curl.h>");
#include "CourierCurlABI.def"
#undef COURIER_CURL_FUNCTION

#endif

/// Keeps this translation unit non-empty where the headers are missing (ISO C asks for one
/// declaration).
typedef int courier_curl_abi_signatures_unit;
