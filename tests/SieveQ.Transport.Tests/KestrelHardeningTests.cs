using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Transport.Hardening;

namespace SieveQ.Transport.Tests;

public class KestrelHardeningTests
{
    private static readonly KestrelLimits Required = new()
    {
        MaxConnections = 123,
        KeepAliveTimeout = TimeSpan.FromSeconds(77),
        RequestHeadersTimeout = TimeSpan.FromSeconds(7),
        MaxStreamsPerConnection = 9,
        MaxMessageBytes = 10_000,
        KeepAlivePingDelay = TimeSpan.FromSeconds(31),
        KeepAlivePingTimeout = TimeSpan.FromSeconds(21),
    };

    [Fact]
    public void Every_bound_given_is_set_on_kestrel()
    {
        var bounds = Required with
        {
            MaxRequestHeadersTotalBytes = 12_345,
            MaxRequestHeaderCount = 17,
            MaxRequestHeaderFieldBytes = 4_321,
            MinRequestBodyDataRate = new MinDataRate(111, TimeSpan.FromSeconds(3)),
            MinResponseDataRate = new MinDataRate(222, TimeSpan.FromSeconds(4)),
            InitialConnectionWindowBytes = 200_000,
            InitialStreamWindowBytes = 100_000,
        };
        var kestrel = new KestrelServerOptions { AddServerHeader = true };
        KestrelHardening.Apply(kestrel, bounds);

        var l = kestrel.Limits;
        Assert.False(kestrel.AddServerHeader);
        Assert.Equal(123, l.MaxConcurrentConnections);
        Assert.Equal(0, l.MaxConcurrentUpgradedConnections);
        Assert.Equal(TimeSpan.FromSeconds(77), l.KeepAliveTimeout);
        Assert.Equal(TimeSpan.FromSeconds(7), l.RequestHeadersTimeout);
        Assert.Equal(10_000 + GrpcFraming.HeaderSize, l.MaxRequestBodySize);
        Assert.Equal(12_345, l.MaxRequestHeadersTotalSize);
        Assert.Equal(17, l.MaxRequestHeaderCount);
        Assert.Equal(111, l.MinRequestBodyDataRate!.BytesPerSecond);
        Assert.Equal(TimeSpan.FromSeconds(3), l.MinRequestBodyDataRate.GracePeriod);
        Assert.Equal(222, l.MinResponseDataRate!.BytesPerSecond);
        Assert.Equal(TimeSpan.FromSeconds(4), l.MinResponseDataRate.GracePeriod);
        Assert.Equal(9, l.Http2.MaxStreamsPerConnection);
        Assert.Equal(4_321, l.Http2.MaxRequestHeaderFieldSize);
        Assert.Equal(200_000, l.Http2.InitialConnectionWindowSize);
        Assert.Equal(100_000, l.Http2.InitialStreamWindowSize);
        Assert.Equal(TimeSpan.FromSeconds(31), l.Http2.KeepAlivePingDelay);
        Assert.Equal(TimeSpan.FromSeconds(21), l.Http2.KeepAlivePingTimeout);
    }

    [Fact]
    public void Bounds_not_given_stay_at_kestrels_defaults()
    {
        var defaults = new KestrelServerOptions().Limits;
        var kestrel = new KestrelServerOptions();
        KestrelHardening.Apply(kestrel, Required);

        var l = kestrel.Limits;
        Assert.Equal(123, l.MaxConcurrentConnections);
        Assert.Equal(9, l.Http2.MaxStreamsPerConnection);
        Assert.Equal(defaults.MaxRequestHeadersTotalSize, l.MaxRequestHeadersTotalSize);
        Assert.Equal(defaults.MaxRequestHeaderCount, l.MaxRequestHeaderCount);
        Assert.Equal(defaults.MinRequestBodyDataRate!.BytesPerSecond, l.MinRequestBodyDataRate!.BytesPerSecond);
        Assert.Equal(defaults.MinResponseDataRate!.BytesPerSecond, l.MinResponseDataRate!.BytesPerSecond);
        Assert.Equal(defaults.Http2.MaxRequestHeaderFieldSize, l.Http2.MaxRequestHeaderFieldSize);
        Assert.Equal(defaults.Http2.InitialConnectionWindowSize, l.Http2.InitialConnectionWindowSize);
        Assert.Equal(defaults.Http2.InitialStreamWindowSize, l.Http2.InitialStreamWindowSize);
    }

    [Fact]
    public void Https_without_a_certificate_and_other_schemes_are_not_listened_on()
    {
        var kestrel = new KestrelServerOptions();
        var e = Assert.Throws<ArgumentException>(() =>
            KestrelHardening.Listen(kestrel, new Uri("https://127.0.0.1:9443"), new SourceConnectionLimiter(4), new PrefaceDeadline(TimeSpan.FromSeconds(1))));
        Assert.Contains("certificate", e.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() =>
            KestrelHardening.Listen(kestrel, new Uri("ftp://127.0.0.1:9443"), new SourceConnectionLimiter(4), new PrefaceDeadline(TimeSpan.FromSeconds(1))));
    }
}
