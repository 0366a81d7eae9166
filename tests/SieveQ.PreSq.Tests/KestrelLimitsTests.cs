using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport.Hardening;

namespace SieveQ.PreSq.Tests;

/// <summary>The pre-SQ's Kestrel, through the shared hardening, keeps every bound it had of its own.</summary>
public sealed class KestrelLimitsTests
{
    [Fact]
    public void The_default_options_bound_every_resource_a_sender_could_exhaust()
    {
        var kestrel = new KestrelServerOptions();
        KestrelHardening.Apply(kestrel, new PreSqHostOptions().KestrelLimits);

        var l = kestrel.Limits;
        Assert.False(kestrel.AddServerHeader);
        Assert.Equal(4_096, l.MaxConcurrentConnections);
        Assert.Equal(0, l.MaxConcurrentUpgradedConnections);
        Assert.Equal(TimeSpan.FromSeconds(60), l.KeepAliveTimeout);
        Assert.Equal(TimeSpan.FromSeconds(10), l.RequestHeadersTimeout);
        Assert.Equal(EnvelopeLimits.MaxDataBytes + 16 * 1024 + 5, l.MaxRequestBodySize);
        Assert.Equal(16 * 1024, l.MaxRequestHeadersTotalSize);
        Assert.Equal(32, l.MaxRequestHeaderCount);
        Assert.Equal(1_024, l.MinRequestBodyDataRate!.BytesPerSecond);
        Assert.Equal(TimeSpan.FromSeconds(5), l.MinRequestBodyDataRate.GracePeriod);
        Assert.Equal(1_024, l.MinResponseDataRate!.BytesPerSecond);
        Assert.Equal(TimeSpan.FromSeconds(5), l.MinResponseDataRate.GracePeriod);
        Assert.Equal(32, l.Http2.MaxStreamsPerConnection);
        Assert.Equal(8 * 1024, l.Http2.MaxRequestHeaderFieldSize);
        Assert.Equal(2 * 1024 * 1024 + 128 * 1024, l.Http2.InitialConnectionWindowSize);
        Assert.Equal(1024 * 1024 + 64 * 1024, l.Http2.InitialStreamWindowSize);
        Assert.Equal(TimeSpan.FromSeconds(30), l.Http2.KeepAlivePingDelay);
        Assert.Equal(TimeSpan.FromSeconds(20), l.Http2.KeepAlivePingTimeout);
    }

    [Fact]
    public void Options_set_on_the_command_line_reach_kestrel()
    {
        var options = new PreSqHostOptions { MaxConnections = 7, MaxStreamsPerConnection = 3, MinRequestBodyBytesPerSecond = 99, MaxMessageBytes = 2_048 };
        var kestrel = new KestrelServerOptions();
        KestrelHardening.Apply(kestrel, options.KestrelLimits);
        Assert.Equal(7, kestrel.Limits.MaxConcurrentConnections);
        Assert.Equal(3, kestrel.Limits.Http2.MaxStreamsPerConnection);
        Assert.Equal(99, kestrel.Limits.MinRequestBodyDataRate!.BytesPerSecond);
        Assert.Equal(2_048 + 5, kestrel.Limits.MaxRequestBodySize);
    }
}
