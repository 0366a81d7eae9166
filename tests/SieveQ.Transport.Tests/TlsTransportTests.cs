using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography;
using SieveQ.Transport.Tests.Proto;
using SieveQ.Transport.Tls;

namespace SieveQ.Transport.Tests;

/// <summary>Real TLS over loopback: the product's hardened listener with a server certificate, the product's pinned channel.</summary>
public sealed class TlsTransportTests : IDisposable
{
    private const string Service = "sieveq.test.v1.Echo";
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);
    private static readonly byte[] Http2Preface = [.. "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8, 0, 0, 0, 4, 0, 0, 0, 0, 0];

    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-tls-").FullName;

    [Fact]
    public async Task A_client_with_the_servers_pin_talks_grpc_over_tls13_and_h2()
    {
        await using var server = await TlsEchoServer.StartAsync();
        using var channel = GrpcChannel.ForAddress(server.Address, server.Pin);
        var reply = await channel.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 42 }, EchoMessage.Parser);
        Assert.Equal(42UL, reply.Seq);

        using var tcp = await ConnectAsync(server.Address);
        await using var tls = new SslStream(tcp.GetStream(), false, (_, c, _, _) => c is not null && server.Pin.Matches(c));
        await tls.AuthenticateAsClientAsync(Tls13Options());
        Assert.Equal(SslProtocols.Tls13, tls.SslProtocol);
        Assert.Equal(SslApplicationProtocol.Http2, tls.NegotiatedApplicationProtocol);
    }

    [Fact]
    public async Task A_client_with_a_wrong_pin_is_refused_with_both_pins_in_the_error()
    {
        await using var server = await TlsEchoServer.StartAsync();
        var wrong = TlsPin.Parse(Convert.ToBase64String(RandomNumberGenerator.GetBytes(TlsPin.Length)));
        using var channel = GrpcChannel.ForAddress(server.Address, wrong);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => channel.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 1 }, EchoMessage.Parser));
        Assert.Equal(GrpcStatusCode.Unavailable, e.Status);
        Assert.Contains(wrong.ToString(), e.Message, StringComparison.Ordinal);
        Assert.Contains(server.Pin.ToString(), e.Message, StringComparison.Ordinal);
        Assert.Contains("refused", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_server_presenting_a_certificate_of_another_key_under_the_same_name_is_refused()
    {
        // The deployment pins the key written at deploy init; an impostor re-issues a certificate with the same subject.
        var pinned = TlsServerCertificate.Create(Path.Combine(_dir, "s.crt"), Path.Combine(_dir, "s.key"), "pre-sq-5");
        await using var impostor = await TlsEchoServer.StartAsync(TlsServerCertificate.CreateEphemeral("pre-sq-5"));
        using var channel = GrpcChannel.ForAddress(impostor.Address, pinned);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => channel.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 1 }, EchoMessage.Parser));
        Assert.Contains($"not the pinned {pinned}", e.Message, StringComparison.Ordinal);

        // The real holder of the pinned key is accepted by the same kind of channel.
        await using var genuine = await TlsEchoServer.StartAsync(TlsServerCertificate.Load(Path.Combine(_dir, "s.crt"), Path.Combine(_dir, "s.key"), pinned));
        using var good = GrpcChannel.ForAddress(genuine.Address, pinned);
        Assert.Equal(7UL, (await good.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 7 }, EchoMessage.Parser)).Seq);
    }

    [Fact]
    public async Task A_tls12_only_client_is_refused()
    {
        await using var server = await TlsEchoServer.StartAsync();
        using var tcp = await ConnectAsync(server.Address);
        await using var tls = new SslStream(tcp.GetStream(), false, (_, _, _, _) => true);
        var options = Tls13Options();
        options.EnabledSslProtocols = SslProtocols.Tls12;
        var e = await Assert.ThrowsAnyAsync<Exception>(() => tls.AuthenticateAsClientAsync(options));
        Assert.True(e is AuthenticationException or IOException, e.ToString());
    }

    [Fact]
    public async Task Channels_refuse_an_https_url_without_a_pin_and_a_pin_on_cleartext()
    {
        var pin = TlsPin.Parse(Convert.ToBase64String(new byte[TlsPin.Length]));
        Assert.Throws<ArgumentException>(() => GrpcChannel.ForAddress(new Uri("https://127.0.0.1:1")));
        Assert.Throws<ArgumentException>(() => GrpcChannel.ForAddress(new Uri("http://127.0.0.1:1"), pin));
        Assert.Throws<FormatException>(() => TlsPin.Parse("c2hvcnQ="));
        await Task.CompletedTask;
    }

    [Fact]
    public async Task A_client_that_never_finishes_its_handshake_is_cut_and_counted_at_the_preface_deadline()
    {
        await using var server = await TlsEchoServer.StartAsync(deadline: TimeSpan.FromSeconds(1));
        var before = server.Preface.Closed;
        using var silent = await ConnectAsync(server.Address);
        using var partial = await ConnectAsync(server.Address);
        // A TLS record header announcing a ClientHello that never comes.
        await partial.GetStream().WriteAsync(new byte[] { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01 });
        Assert.True(await IsClosedByServerAsync(silent), "a client that never started its handshake was kept");
        Assert.True(await IsClosedByServerAsync(partial), "a client that never finished its handshake was kept");
        Assert.True(await WaitUntilAsync(() => server.Preface.Closed == before + 2), $"closed {server.Preface.Closed - before} of 2");
    }

    [Fact]
    public async Task A_client_that_finishes_tls_but_sends_no_http2_preface_is_cut_at_the_deadline()
    {
        // The deadline covers the TLS handshake too: 5 s, so that the client that speaks in time still does on a
        // loaded CI machine (1 s was not always enough there).
        var deadline = TimeSpan.FromSeconds(5);
        await using var server = await TlsEchoServer.StartAsync(deadline: deadline);
        var before = server.Preface.Closed;
        using var tcp = await ConnectAsync(server.Address);
        await using var tls = new SslStream(tcp.GetStream(), false, (_, c, _, _) => c is not null && server.Pin.Matches(c));
        await tls.AuthenticateAsClientAsync(Tls13Options());
        Assert.True(await IsClosedByServerAsync(tls), "a TLS client silent after its handshake was kept");
        Assert.True(await WaitUntilAsync(() => server.Preface.Closed == before + 1));

        // One that speaks in time is served past the deadline.
        using var tcp2 = await ConnectAsync(server.Address);
        await using var tls2 = new SslStream(tcp2.GetStream(), false, (_, c, _, _) => c is not null && server.Pin.Matches(c));
        await tls2.AuthenticateAsClientAsync(Tls13Options());
        await tls2.WriteAsync(Http2Preface);
        await Task.Delay(deadline + TimeSpan.FromSeconds(1));
        Assert.Equal(before + 1, server.Preface.Closed);
    }

    [Fact]
    public void Bad_certificate_files_are_refused_with_the_file_and_the_reason()
    {
        var crt = Path.Combine(_dir, "a.crt");
        var key = Path.Combine(_dir, "a.key");
        var pin = TlsServerCertificate.Create(crt, key, "a");
        var otherPin = TlsServerCertificate.Create(Path.Combine(_dir, "b.crt"), Path.Combine(_dir, "b.key"), "b");
        using (var ok = TlsServerCertificate.Load(crt, key, pin))
        {
            Assert.True(ok.HasPrivateKey);
        }
        if (!OperatingSystem.IsWindows())
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(key));
        }

        var missing = Assert.Throws<TlsCertificateException>(() => TlsServerCertificate.Load(Path.Combine(_dir, "none.crt"), key, pin));
        Assert.Contains("none.crt does not exist", missing.Message, StringComparison.Ordinal);

        var garbled = Path.Combine(_dir, "garbled.crt");
        File.WriteAllText(garbled, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
        var g = Assert.Throws<TlsCertificateException>(() => TlsServerCertificate.Load(garbled, key, pin));
        Assert.Contains("garbled.crt", g.Message, StringComparison.Ordinal);

        // Another certificate's key beside this certificate.
        var mismatch = Assert.Throws<TlsCertificateException>(() => TlsServerCertificate.Load(crt, Path.Combine(_dir, "b.key"), pin));
        Assert.Contains("cannot be loaded", mismatch.Message, StringComparison.Ordinal);

        // A good pair that is not the one the deployment pins.
        var unpinned = Assert.Throws<TlsCertificateException>(() => TlsServerCertificate.Load(Path.Combine(_dir, "b.crt"), Path.Combine(_dir, "b.key"), pin));
        Assert.Contains($"has key pin {otherPin}, but the deployment pins {pin}", unpinned.Message, StringComparison.Ordinal);

        // An RSA certificate.
        using var rsa = RSA.Create(2048);
        var request = new System.Security.Cryptography.X509Certificates.CertificateRequest("CN=rsa", rsa, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        using var rsaCert = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddDays(1));
        File.WriteAllText(Path.Combine(_dir, "rsa.crt"), rsaCert.ExportCertificatePem());
        File.WriteAllText(Path.Combine(_dir, "rsa.key"), rsa.ExportPkcs8PrivateKeyPem());
        var r = Assert.Throws<TlsCertificateException>(() => TlsServerCertificate.Load(Path.Combine(_dir, "rsa.crt"), Path.Combine(_dir, "rsa.key"), pin));
        Assert.Contains("ECDSA P-256", r.Message, StringComparison.Ordinal);
    }

    private static SslClientAuthenticationOptions Tls13Options() => new()
    {
        TargetHost = "echo",
        EnabledSslProtocols = SslProtocols.Tls13,
        ApplicationProtocols = [SslApplicationProtocol.Http2],
    };

    private static async Task<TcpClient> ConnectAsync(Uri address)
    {
        var c = new TcpClient();
        await c.ConnectAsync(address.Host, address.Port);
        return c;
    }

    private static Task<bool> IsClosedByServerAsync(TcpClient c) => IsClosedByServerAsync(c.GetStream());

    /// <summary>Reads (discarding what comes) until the server closes or resets, or a generous bound passes.</summary>
    private static async Task<bool> IsClosedByServerAsync(Stream s)
    {
        var buffer = new byte[4096];
        using var bound = new CancellationTokenSource(Generous);
        try
        {
            while (await s.ReadAsync(buffer, bound.Token) > 0)
            {
            }
            return true;
        }
        catch (IOException)
        {
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    private static async Task<bool> WaitUntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Generous;
        while (DateTime.UtcNow < deadline)
        {
            if (condition())
            {
                return true;
            }
            await Task.Delay(50);
        }
        return condition();
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
