using System.Text;
using SieveQ.Agent.Hosting;
using SieveQ.Sdk;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// What an eavesdropper on the sieve's gRPC links sees: a real deployment, its sender and receiver connected through
/// relays the test owns (sender -> pre-SQ, receiver -> replica-SQ, receiver acknowledgements -> pre-SQ), one message
/// with a unique marker. Under TLS the marker must never be on the wire; the cleartext run is the control that
/// shows the tap does see payloads when nothing encrypts them.
/// </summary>
public sealed class LinkConfidentialityTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(120);

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_payload_marker_is_on_the_wire_only_when_the_links_are_cleartext(bool tls)
    {
        await using var d = await SieveDeployment.StartAsync(tls: tls);
        var direct = d.Context.ToClientConfiguration();
        var taps = new List<WireTap>();
        Uri Tap(Uri target)
        {
            var t = new WireTap(target);
            taps.Add(t);
            return t.Address;
        }
        try
        {
            var tapped = direct with
            {
                PreSqs = direct.PreSqs.ToDictionary(kv => kv.Key, kv => Tap(kv.Value)),
                Replicas = direct.Replicas.ToDictionary(kv => kv.Key, kv => Tap(kv.Value)),
            };
            Assert.All(tapped.PreSqs.Values.Concat(tapped.Replicas.Values), u => Assert.Equal(tls ? "https" : "http", u.Scheme));
            var marker = Encoding.ASCII.GetBytes($"MARKER-{Guid.NewGuid():N}-PAYMENT-4111111111111111");
            await using var sender = SieveQSender.Create(tapped, 1, Path.Combine(d.Directory, "parties"));
            await using var receiver = SieveQReceiver.Create(tapped, SieveDeployment.ReceiverId, Path.Combine(d.Directory, "parties", "receiver"));
            using var bound = new CancellationTokenSource(Bound);
            await sender.SendAsync(SieveDeployment.ReceiverId, marker, bound.Token);
            await foreach (var m in receiver.ReadAllAsync(bound.Token))
            {
                if (m.Data.Span.SequenceEqual(marker))
                {
                    break;
                }
            }
            await receiver.CommitAsync(bound.Token);

            var recorded = taps.Sum(t => t.RecordedBytes);
            output.WriteLine($"{(tls ? "TLS 1.3" : "cleartext")}: {recorded} bytes recorded on {taps.Count} tapped endpoints");
            Assert.DoesNotContain(taps, t => t.Overflowed);
            Assert.True(recorded > marker.Length * 4, "the taps saw (almost) no traffic: the clients went around them");
            var seen = taps.Any(t => t.Saw(marker));
            Assert.Equal(!tls, seen);
            // The first half alone, too: the marker is not split across records by luck.
            Assert.Equal(!tls, taps.Any(t => t.Saw(marker.AsSpan(0, 20))));
            d.Passed = true;
        }
        finally
        {
            foreach (var t in taps)
            {
                await t.DisposeAsync();
            }
        }
    }
}
