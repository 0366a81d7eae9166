/* The WFP glue's field selection (wfp/fwps_fields.h), checked on Linux.
 *
 * The header also static-asserts every value, so a drifted number already
 * fails this build and the mingw one; these tests check what the glue does
 * with the values: that each layer it registers at gets that layer's own
 * indices, and that reading a value array laid out as WFP documents it
 * yields the right flags and address. Expected numbers are from the fwpsk.h
 * enumerations on learn.microsoft.com (see the header). */
#include <stdint.h>
#include <string.h>

#include "../wfp/fwps_fields.h"
#include "test.h"

static sqfw_field_map map_of(unsigned layer)
{
    sqfw_field_map m;
    memset(&m, 0xEE, sizeof m);
    CHECK(sqfw_fields_for_layer(layer, &m));
    return m;
}

/* every index named in a map is distinct and below count */
static void check_consistent(const sqfw_field_map *m)
{
    const unsigned char idx[] = {m->protocol, m->local_address,   m->remote_address, m->local_port,
                                 m->remote_port, m->flags,       m->app_id,         m->user_id,
                                 m->direction, m->interface_index, m->sub_interface_index};
    for (size_t i = 0; i < sizeof idx; i++) {
        if (idx[i] == SQFW_FIELD_NONE)
            continue;
        CHECK(idx[i] < m->count);
        for (size_t j = i + 1; j < sizeof idx; j++)
            CHECK(idx[i] != idx[j]);
    }
}

TEST(fwps_ale_auth_connect_fields)
{
    static const unsigned layers[] = {FWPS_LAYER_ALE_AUTH_CONNECT_V4, FWPS_LAYER_ALE_AUTH_CONNECT_V6};
    for (size_t i = 0; i < 2; i++) {
        sqfw_field_map m = map_of(layers[i]);
        CHECK_EQ(m.app_id, 0);
        CHECK_EQ(m.user_id, 1);
        CHECK_EQ(m.local_address, 2);
        CHECK_EQ(m.local_port, 4);
        CHECK_EQ(m.protocol, 5);
        CHECK_EQ(m.remote_address, 6);
        CHECK_EQ(m.remote_port, 7);
        CHECK_EQ(m.flags, 12); /* after IP_DESTINATION_ADDRESS_TYPE (10) and IP_LOCAL_INTERFACE (11) */
        CHECK_EQ(m.direction, SQFW_FIELD_NONE);
        CHECK_EQ(m.interface_index, SQFW_FIELD_NONE);
        CHECK_EQ(m.count, 13);
        check_consistent(&m);
    }
}

TEST(fwps_ale_auth_recv_accept_fields)
{
    static const unsigned layers[] = {FWPS_LAYER_ALE_AUTH_RECV_ACCEPT_V4, FWPS_LAYER_ALE_AUTH_RECV_ACCEPT_V6};
    for (size_t i = 0; i < 2; i++) {
        sqfw_field_map m = map_of(layers[i]);
        CHECK_EQ(m.app_id, 0);
        CHECK_EQ(m.user_id, 1);
        CHECK_EQ(m.local_address, 2);
        CHECK_EQ(m.local_port, 4);
        CHECK_EQ(m.protocol, 5);
        CHECK_EQ(m.remote_address, 6);
        CHECK_EQ(m.remote_port, 7);
        /* no IP_DESTINATION_ADDRESS_TYPE at this layer: FLAGS is 11, 12 is SIO_FIREWALL_SYSTEM_PORT */
        CHECK_EQ(m.flags, 11);
        CHECK(m.flags != FWPS_FIELD_ALE_AUTH_RECV_ACCEPT_V4_SIO_FIREWALL_SYSTEM_PORT);
        /* the arrival interface a pended inbound packet is receive-injected on */
        CHECK_EQ(m.interface_index, 16);
        CHECK_EQ(m.sub_interface_index, 17);
        CHECK_EQ(m.count, 18);
        check_consistent(&m);
    }
}

TEST(fwps_ale_flow_established_fields)
{
    static const unsigned layers[] = {FWPS_LAYER_ALE_FLOW_ESTABLISHED_V4, FWPS_LAYER_ALE_FLOW_ESTABLISHED_V6};
    for (size_t i = 0; i < 2; i++) {
        sqfw_field_map m = map_of(layers[i]);
        CHECK_EQ(m.app_id, 0);
        CHECK_EQ(m.remote_address, 6);
        CHECK_EQ(m.remote_port, 7);
        CHECK_EQ(m.direction, 12);
        CHECK_EQ(m.flags, 15);
        CHECK_EQ(m.count, 16);
        check_consistent(&m);
    }
}

TEST(fwps_transport_fields)
{
    static const unsigned out_layers[] = {FWPS_LAYER_OUTBOUND_TRANSPORT_V4, FWPS_LAYER_OUTBOUND_TRANSPORT_V6};
    static const unsigned in_layers[] = {FWPS_LAYER_INBOUND_TRANSPORT_V4, FWPS_LAYER_INBOUND_TRANSPORT_V6};
    for (size_t i = 0; i < 2; i++) {
        sqfw_field_map o = map_of(out_layers[i]);
        CHECK_EQ(o.protocol, 0);
        CHECK_EQ(o.local_address, 1);
        CHECK_EQ(o.remote_address, 3); /* not 6: that is IP_LOCAL_INTERFACE here */
        CHECK(o.remote_address != FWPS_FIELD_OUTBOUND_TRANSPORT_V4_IP_LOCAL_INTERFACE);
        CHECK_EQ(o.local_port, 4);
        CHECK_EQ(o.remote_port, 5);
        CHECK_EQ(o.interface_index, 7);
        CHECK_EQ(o.sub_interface_index, 8);
        CHECK_EQ(o.flags, 10);
        CHECK_EQ(o.app_id, SQFW_FIELD_NONE); /* no ALE fields at the transport layers */
        CHECK_EQ(o.direction, SQFW_FIELD_NONE);
        CHECK_EQ(o.count, 11);
        check_consistent(&o);

        sqfw_field_map n = map_of(in_layers[i]);
        CHECK_EQ(n.protocol, 0);
        CHECK_EQ(n.local_address, 1);
        CHECK_EQ(n.remote_address, 2); /* inbound order differs from outbound */
        CHECK(n.remote_address != FWPS_FIELD_INBOUND_TRANSPORT_V4_IP_LOCAL_INTERFACE);
        CHECK_EQ(n.local_port, 4);
        CHECK_EQ(n.remote_port, 5);
        CHECK_EQ(n.interface_index, 7);
        CHECK_EQ(n.sub_interface_index, 8);
        CHECK_EQ(n.flags, 9);
        CHECK_EQ(n.app_id, SQFW_FIELD_NONE);
        CHECK_EQ(n.count, 10);
        check_consistent(&n);
    }
}

TEST(fwps_layer_ids)
{
    CHECK_EQ(FWPS_LAYER_INBOUND_TRANSPORT_V4, 12);
    CHECK_EQ(FWPS_LAYER_INBOUND_TRANSPORT_V6, 14);
    CHECK_EQ(FWPS_LAYER_OUTBOUND_TRANSPORT_V4, 16);
    CHECK_EQ(FWPS_LAYER_OUTBOUND_TRANSPORT_V6, 18);
    CHECK_EQ(FWPS_LAYER_ALE_AUTH_RECV_ACCEPT_V4, 44);
    CHECK_EQ(FWPS_LAYER_ALE_AUTH_RECV_ACCEPT_V6, 46);
    CHECK_EQ(FWPS_LAYER_ALE_AUTH_CONNECT_V4, 48);
    CHECK_EQ(FWPS_LAYER_ALE_AUTH_CONNECT_V6, 50);
    CHECK_EQ(FWPS_LAYER_ALE_FLOW_ESTABLISHED_V4, 52);
    CHECK_EQ(FWPS_LAYER_ALE_FLOW_ESTABLISHED_V6, 54);
    /* layers the driver does not register at get no map */
    sqfw_field_map m;
    CHECK(!sqfw_fields_for_layer(FWPS_LAYER_ALE_AUTH_RECV_ACCEPT_V4_DISCARD, &m));
    CHECK(!sqfw_fields_for_layer(FWPS_LAYER_ALE_AUTH_CONNECT_V4_DISCARD, &m));
    CHECK(!sqfw_fields_for_layer(FWPS_LAYER_STREAM_V4, &m));
    CHECK(!sqfw_fields_for_layer(0, &m));
    CHECK(!sqfw_fields_for_layer(1000, &m));
}

/* A stand-in for WFP's incoming value array: type tag plus value, at the
 * positions the layer's documented enumeration gives. */
enum { T_EMPTY, T_U8, T_U16, T_U32, T_U64 };
typedef struct {
    int type;
    uint64_t v;
} fake_value;

#define IS_LOOPBACK 0x1u
#define IS_REAUTHORIZE 0x4u

TEST(fwps_recv_accept_reads_flags_not_system_port)
{
    /* an inbound loopback re-authorisation at ALE_AUTH_RECV_ACCEPT_V4; the
     * positions are the documented ones, written as numbers so that they do
     * not move with the header's declarations */
    fake_value vals[18];
    memset(vals, 0, sizeof vals);
    vals[10] = (fake_value){T_U64, 0x0006000000000001ull};        /* IP_LOCAL_INTERFACE (a LUID) */
    vals[11] = (fake_value){T_U32, IS_LOOPBACK | IS_REAUTHORIZE}; /* FLAGS */
    vals[12] = (fake_value){T_U32, 0};                            /* SIO_FIREWALL_SYSTEM_PORT */
    vals[16] = (fake_value){T_U32, 7};                            /* INTERFACE_INDEX */
    vals[17] = (fake_value){T_U32, 3};                            /* SUB_INTERFACE_INDEX */
    sqfw_field_map m = map_of(FWPS_LAYER_ALE_AUTH_RECV_ACCEPT_V4);
    CHECK(m.count <= sizeof vals / sizeof vals[0]);
    if (m.count > sizeof vals / sizeof vals[0])
        return;
    CHECK_EQ(vals[m.flags].type, T_U32);
    CHECK(vals[m.flags].v & IS_LOOPBACK);
    CHECK(vals[m.flags].v & IS_REAUTHORIZE);
    CHECK_EQ(vals[m.interface_index].v, 7);
    CHECK_EQ(vals[m.sub_interface_index].v, 3);
}

TEST(fwps_outbound_transport_reads_remote_address_not_interface)
{
    /* 93.184.216.34:443 from 10.0.0.5:50000, as OUTBOUND_TRANSPORT_V4 gives it
     * (IPv4 addresses in host order, the interface as a LUID) */
    fake_value vals[11];
    memset(vals, 0, sizeof vals);
    vals[0] = (fake_value){T_U8, 6};                      /* IP_PROTOCOL */
    vals[1] = (fake_value){T_U32, 0x0A000005u};           /* IP_LOCAL_ADDRESS */
    vals[3] = (fake_value){T_U32, 0x5DB8D822u};           /* IP_REMOTE_ADDRESS */
    vals[4] = (fake_value){T_U16, 50000};                 /* IP_LOCAL_PORT */
    vals[5] = (fake_value){T_U16, 443};                   /* IP_REMOTE_PORT */
    vals[6] = (fake_value){T_U64, 0x0006000000000001ull}; /* IP_LOCAL_INTERFACE (a LUID) */
    sqfw_field_map m = map_of(FWPS_LAYER_OUTBOUND_TRANSPORT_V4);
    CHECK(m.count <= sizeof vals / sizeof vals[0]);
    if (m.count > sizeof vals / sizeof vals[0])
        return;
    CHECK_EQ(vals[m.remote_address].type, T_U32); /* the glue requires FWP_UINT32 or refuses to re-inject */
    CHECK_EQ(vals[m.remote_address].v, 0x5DB8D822u);
    CHECK_EQ(vals[m.remote_port].v, 443);
    CHECK_EQ(vals[m.protocol].v, 6);
}

TEST(fwps_inbound_transport_reads_interfaces)
{
    fake_value vals[10];
    memset(vals, 0, sizeof vals);
    vals[6] = (fake_value){T_U64, 0x0006000000000001ull}; /* IP_LOCAL_INTERFACE (a LUID) */
    vals[7] = (fake_value){T_U32, 7001};                  /* INTERFACE_INDEX */
    vals[8] = (fake_value){T_U32, 7002};                  /* SUB_INTERFACE_INDEX */
    sqfw_field_map m = map_of(FWPS_LAYER_INBOUND_TRANSPORT_V6);
    CHECK(m.count <= sizeof vals / sizeof vals[0]);
    if (m.count > sizeof vals / sizeof vals[0])
        return;
    CHECK_EQ(vals[m.interface_index].v, 7001);
    CHECK_EQ(vals[m.sub_interface_index].v, 7002);
}
