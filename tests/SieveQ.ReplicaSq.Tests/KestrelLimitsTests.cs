using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Transport.Hardening;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>The replica-SQ's API Kestrel, through the same hardening as the pre-SQ's, keeps the bounds it had of its own.</summary>
public sealed class KestrelLimitsTests
{
    [Fact]
    public void The_default_options_bound_connections_streams_and_requests_and_leave_the_rest_to_kestrel()
    {
        var defaults = new KestrelServerOptions().Limits;
        var kestrel = new KestrelServerOptions();
        KestrelHardening.Apply(kestrel, new ReplicaSqHostOptions().KestrelLimits);

        var l = kestrel.Limits;
        Assert.False(kestrel.AddServerHeader);
        Assert.Equal(1_024, l.MaxConcurrentConnections);
        Assert.Equal(0, l.MaxConcurrentUpgradedConnections);
        Assert.Equal(TimeSpan.FromSeconds(130), l.KeepAliveTimeout);
        Assert.Equal(TimeSpan.FromSeconds(10), l.RequestHeadersTimeout);
        Assert.Equal(1024 * 1024 + 5, l.MaxRequestBodySize);
        Assert.Equal(64, l.Http2.MaxStreamsPerConnection);
        Assert.Equal(TimeSpan.FromSeconds(30), l.Http2.KeepAlivePingDelay);
        Assert.Equal(TimeSpan.FromSeconds(20), l.Http2.KeepAlivePingTimeout);
        Assert.Equal(defaults.MaxRequestHeadersTotalSize, l.MaxRequestHeadersTotalSize);
        Assert.Equal(defaults.MaxRequestHeaderCount, l.MaxRequestHeaderCount);
        Assert.Equal(defaults.MinRequestBodyDataRate!.BytesPerSecond, l.MinRequestBodyDataRate!.BytesPerSecond);
        Assert.Equal(defaults.Http2.InitialConnectionWindowSize, l.Http2.InitialConnectionWindowSize);
        Assert.Equal(defaults.Http2.MaxRequestHeaderFieldSize, l.Http2.MaxRequestHeaderFieldSize);
    }
}
