// CCourierLinux: the Linux system interfaces Swift cannot import directly. For
// CourierReachability, the rtnetlink types and the NLMSG_* / RTA_* / RTNH_* / IFLA_* macros, as
// `static inline` functions (Glibc's Swift module has no netlink types), and `setns` for its
// namespace tests; for CourierTesting's MockServer, `accept4` and `pipe2` with close-on-exec
// from the start. <linux/if.h> is deliberately not included: it clashes with <net/if.h>, which Glibc
// imports. On other platforms the header is empty, so the target compiles everywhere.
#ifndef CCOURIER_LINUX_H
#define CCOURIER_LINUX_H

#ifdef __linux__

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netpacket/packet.h>  // sockaddr_ll: getifaddrs reports ifi_type in sll_hatype
#include <stddef.h>
#include <sys/socket.h>
#include <stdint.h>

// MARK: - Netlink messages (NLMSG_*)

/// NLMSG_ALIGN(len).
static inline uint32_t ccourier_nlmsg_align(uint32_t len) { return NLMSG_ALIGN(len); }

/// NLMSG_LENGTH(len): header plus `len` bytes of payload.
static inline uint32_t ccourier_nlmsg_length(uint32_t len) { return NLMSG_LENGTH(len); }

/// NLMSG_HDRLEN.
static inline uint32_t ccourier_nlmsg_hdrlen(void) { return NLMSG_HDRLEN; }

/// NLMSG_OK(nlh, len): whether a whole message starts at `nlh` within `len` bytes.
static inline int ccourier_nlmsg_ok(const struct nlmsghdr *nlh, int len) {
  return len >= (int)sizeof(struct nlmsghdr) && nlh->nlmsg_len >= sizeof(struct nlmsghdr) &&
         (int)nlh->nlmsg_len <= len;
}

/// NLMSG_NEXT(nlh, len): the next message; `*len` is reduced by the bytes skipped.
static inline struct nlmsghdr *ccourier_nlmsg_next(struct nlmsghdr *nlh, int *len) {
  return NLMSG_NEXT(nlh, *len);
}

/// NLMSG_DATA(nlh): the payload after the header.
static inline void *ccourier_nlmsg_data(struct nlmsghdr *nlh) { return NLMSG_DATA(nlh); }

/// NLMSG_PAYLOAD(nlh, 0): the payload's length.
static inline int ccourier_nlmsg_payload(const struct nlmsghdr *nlh) {
  return (int)NLMSG_PAYLOAD(nlh, 0);
}

// MARK: - Route attributes (RTA_*)

/// RTA_OK(rta, len).
static inline int ccourier_rta_ok(const struct rtattr *rta, int len) {
  return len >= (int)sizeof(struct rtattr) && rta->rta_len >= sizeof(struct rtattr) &&
         (int)rta->rta_len <= len;
}

/// RTA_NEXT(rta, len); `*len` is reduced by the bytes skipped.
static inline struct rtattr *ccourier_rta_next(struct rtattr *rta, int *len) {
  return RTA_NEXT(rta, *len);
}

/// RTA_DATA(rta).
static inline void *ccourier_rta_data(struct rtattr *rta) { return RTA_DATA(rta); }

/// RTA_PAYLOAD(rta).
static inline int ccourier_rta_payload(const struct rtattr *rta) { return (int)RTA_PAYLOAD(rta); }

/// RTM_RTA(rtm): the first attribute of a route message.
static inline struct rtattr *ccourier_rtm_rta(struct rtmsg *rtm) { return RTM_RTA(rtm); }

/// RTM_PAYLOAD(nlh): the attributes' length in a route message.
static inline int ccourier_rtm_payload(struct nlmsghdr *nlh) { return (int)RTM_PAYLOAD(nlh); }

/// IFLA_RTA(ifi): the first attribute of a link message.
static inline struct rtattr *ccourier_ifla_rta(struct ifinfomsg *ifi) { return IFLA_RTA(ifi); }

/// IFLA_PAYLOAD(nlh): the attributes' length in a link message.
static inline int ccourier_ifla_payload(struct nlmsghdr *nlh) { return (int)IFLA_PAYLOAD(nlh); }

// MARK: - Dump requests

/// A netlink request header followed by a route message, laid out as the kernel reads it.
struct ccourier_route_request {
  struct nlmsghdr header;
  struct rtmsg message;
};

/// An RTM_GETROUTE dump request for every address family, with sequence number `sequence`.
static inline struct ccourier_route_request ccourier_route_dump_request(uint32_t sequence) {
  struct ccourier_route_request request = {0};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  request.header.nlmsg_type = RTM_GETROUTE;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = sequence;
  request.message.rtm_family = AF_UNSPEC;
  return request;
}

// MARK: - Route lookups (what `ip route get` sends)

#ifndef RTM_F_FIB_MATCH
#define RTM_F_FIB_MATCH 0x2000  // Linux 4.13; an older kernel ignores the flag
#endif

/// An RTM_GETROUTE request for one destination address: the route message, then one RTA_DST
/// attribute with room for an IPv6 address. Laid out without padding: the header is 16 bytes,
/// the route message 12, the attribute's header 4.
struct ccourier_route_lookup_request {
  struct nlmsghdr header;
  struct rtmsg message;
  struct rtattr destination;
  unsigned char address[16];
};

/// The RTM_GETROUTE request `ip route get fibmatch <address>` sends: the route the kernel
/// would use for `address` (`length` bytes, 4 for `AF_INET` or 16 for `AF_INET6`), answered
/// with the table entry that matched (RTM_F_FIB_MATCH), whose flags say whether its link has
/// lost its carrier (RTNH_F_LINKDOWN). The answer is one RTM_NEWROUTE or an NLMSG_ERROR.
static inline struct ccourier_route_lookup_request ccourier_route_lookup_request(
    uint32_t sequence, uint8_t family, const uint8_t *address, uint32_t length) {
  struct ccourier_route_lookup_request request = {0};
  uint32_t size = length < 16 ? length : 16;
  for (uint32_t index = 0; index < size; index++) request.address[index] = address[index];
  request.destination.rta_type = RTA_DST;
  request.destination.rta_len = (unsigned short)RTA_LENGTH(size);
  request.header.nlmsg_len = NLMSG_ALIGN(NLMSG_LENGTH(sizeof(struct rtmsg))) + RTA_LENGTH(size);
  request.header.nlmsg_type = RTM_GETROUTE;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.header.nlmsg_seq = sequence;
  request.message.rtm_family = family;
  request.message.rtm_dst_len = (unsigned char)(size * 8);
  request.message.rtm_flags = RTM_F_FIB_MATCH;
  return request;
}

/// The (negative) errno of an NLMSG_ERROR message, or 0 for an acknowledgement; 1 when the
/// message is too short to hold one.
static inline int ccourier_nlmsg_error_code(struct nlmsghdr *nlh) {
  if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) return 1;
  return ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
}

/// RTNH_F_DEAD | RTNH_F_LINKDOWN: a next hop the kernel will not send through (its link is
/// down or has no carrier).
static inline uint32_t ccourier_next_hop_down_flags(void) {
  return RTNH_F_DEAD | RTNH_F_LINKDOWN;
}

/// For an RTA_MULTIPATH attribute's payload (`length` bytes of `struct rtnexthop`s): 1 when
/// every next hop is down (ccourier_next_hop_down_flags), 0 when one is usable or there is
/// none to read.
static inline int ccourier_multipath_all_down(void *payload, int length) {
  struct rtnexthop *hop = (struct rtnexthop *)payload;
  int seen = 0;
  while (length >= (int)sizeof(struct rtnexthop) && RTNH_OK(hop, length)) {
    if ((hop->rtnh_flags & (RTNH_F_DEAD | RTNH_F_LINKDOWN)) == 0) return 0;
    seen = 1;
    length -= RTNH_ALIGN(hop->rtnh_len);
    hop = RTNH_NEXT(hop);
  }
  return seen;
}

// MARK: - Multicast groups (the RTMGRP_* bit masks, for sockaddr_nl.nl_groups)

/// RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE |
/// RTMGRP_IPV6_ROUTE: every change that can alter whether a default path exists.
static inline uint32_t ccourier_path_groups(void) {
  return RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE |
         RTMGRP_IPV6_ROUTE;
}

// MARK: - Calls Glibc's Swift module does not export (defined in shim.c)

/// setns(fd, CLONE_NEWNET): moves the calling thread into the network namespace `fd` refers to.
/// Returns 0, or -1 with errno set.
int ccourier_enter_network_namespace(int fd);

/// pipe2(fds, O_CLOEXEC | O_NONBLOCK). Returns 0, or -1 with errno set.
int ccourier_pipe_cloexec_nonblock(int fds[2]);

/// accept4(fd, NULL, NULL, SOCK_CLOEXEC): a connection that a process spawned at the same
/// moment cannot inherit. Returns the descriptor, or -1 with errno set.
int ccourier_accept_cloexec(int fd);

#endif  // __linux__

#endif  // CCOURIER_LINUX_H
