// SPDX-License-Identifier: GPL-2.0
/*
 * v6bench's XDP forwarder (lab/dataplanes/xdp/plane.py): on every router
 * interface, an IPv4 or IPv6 frame whose next hop the kernel's FIB knows
 * (bpf_fib_lookup, with its neighbour resolved) gets its TTL or hop limit
 * decreased (IPv4's checksum updated as RFC 1624 gives), the next hop's and
 * the egress interface's MACs, and is redirected to that interface. Every
 * other frame goes on to the kernel (XDP_PASS): TTL 1, IPv4 options,
 * hop-by-hop options (RFC 8200 §4.3: every router reads them), no route or
 * no neighbour yet, too big for the egress MTU, addressed to the router.
 * Counts per CPU in v6b_counts, by COUNT_* below.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AF_INET 2
#define AF_INET6 10

/* Keys of v6b_counts (plane.py reads them by these numbers). */
enum {
	COUNT_FAST_V4,   /* IPv4 frames redirected */
	COUNT_FAST_V6,   /* IPv6 frames redirected */
	COUNT_PASS_V4,   /* IPv4 frames handed to the kernel: not for the router itself */
	COUNT_PASS_V6,
	COUNT_LOCAL,     /* frames for the router itself, and every other protocol (ARP) */
	NCOUNT
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NCOUNT);
	__type(key, __u32);
	__type(value, __u64);
} v6b_counts SEC(".maps");

static __always_inline int count(__u32 k, int verdict)
{
	__u64 *n = bpf_map_lookup_elem(&v6b_counts, &k);
	if (n)
		*n += 1;
	return verdict;
}

static __always_inline void ttl_down(struct iphdr *ip)
{
	__u32 sum = ip->check;
	sum += bpf_htons(0x0100);
	ip->check = (__u16)(sum + (sum >= 0xFFFF));
	ip->ttl--;
}

SEC("xdp")
int v6b_forward(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bpf_fib_lookup fib = {};
	__u32 fast, slow;
	long rc;
	if ((void *)(eth + 1) > end)
		return count(COUNT_LOCAL, XDP_PASS);
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end)
			return count(COUNT_LOCAL, XDP_PASS);
		fast = COUNT_FAST_V4; slow = COUNT_PASS_V4;
		if (ip->ttl <= 1 || ip->ihl != 5)
			return count(slow, XDP_PASS);
		fib.family = AF_INET;
		fib.tos = ip->tos;
		fib.l4_protocol = ip->protocol;
		fib.tot_len = bpf_ntohs(ip->tot_len);
		fib.ipv4_src = ip->saddr;
		fib.ipv4_dst = ip->daddr;
		fib.ifindex = ctx->ingress_ifindex;
		rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return count(rc == BPF_FIB_LKUP_RET_NOT_FWDED ? COUNT_LOCAL : slow, XDP_PASS);
		ttl_down(ip);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return count(COUNT_LOCAL, XDP_PASS);
		fast = COUNT_FAST_V6; slow = COUNT_PASS_V6;
		if (ip6->hop_limit <= 1 || ip6->nexthdr == 0)  /* hop-by-hop options: every router reads them */
			return count(slow, XDP_PASS);
		fib.family = AF_INET6;
		fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0FFFFFFF);
		fib.l4_protocol = ip6->nexthdr;
		fib.tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
		__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
		fib.ifindex = ctx->ingress_ifindex;
		rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
		if (rc != BPF_FIB_LKUP_RET_SUCCESS)
			return count(rc == BPF_FIB_LKUP_RET_NOT_FWDED ? COUNT_LOCAL : slow, XDP_PASS);
		ip6->hop_limit--;
	} else {
		return count(COUNT_LOCAL, XDP_PASS);
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	return count(fast, bpf_redirect(fib.ifindex, 0));
}

char _license[] SEC("license") = "GPL";
