using System.Net;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Transport.Tls;

namespace SieveQ.Attacks.Attacks.Http2;

/// <summary>
/// The pre-SQ an HTTP/2 attacker aims at (the deployment's first: one legitimate sender starts on it), and the
/// loopback addresses the attacker connects from: 127.0.0.2 and up, each a source of its own for the pre-SQ's
/// per-source connection limit (the legitimate clients are on 127.0.0.1).
/// </summary>
internal sealed record EdgeTarget(int Id, Uri Url, TlsPin? Pin)
{
    public static string ExchangePath => $"/{ProtocolNames.PreSqService}/{ProtocolNames.Exchange}";

    public static string HealthPath => $"/{ProtocolNames.PreSqService}/{ProtocolNames.Health}";

    public string Name => LocalDeploymentLauncher.PreSqName(Id);

    public static EdgeTarget FirstPreSq(DeploymentConfig config)
    {
        var p = config.PreSqs.MinBy(x => x.Id)!;
        return new EdgeTarget(p.Id, new Uri(p.Url), p.Pin());
    }

    /// <summary>The pre-SQ process's name before the deployment exists: the local plan numbers pre-SQs after the 4 replicas.</summary>
    public static string FirstPreSqName => LocalDeploymentLauncher.PreSqName(4);

    public static IPAddress Source(int i) => new([127, 0, 0, (byte)(2 + i)]);

    public Task<RawHttp2Connection> OpenAsync(int source, CancellationToken ct, bool preface = true) =>
        RawHttp2Connection.OpenAsync(Url, Pin, Source(source), ct, preface);
}
