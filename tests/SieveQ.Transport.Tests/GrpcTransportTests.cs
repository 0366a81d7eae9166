using System.Buffers;
using System.Net;
using Google.Protobuf;
using SieveQ.Transport.Tests.Proto;

namespace SieveQ.Transport.Tests;

public class GrpcTransportTests
{
    private const string Service = "sieveq.test.v1.Echo";

    [Fact]
    public async Task Bidirectional_stream_echoes_ten_thousand_messages_in_order_and_ends_ok()
    {
        await using var server = await EchoServer.StartAsync();
        using var channel = GrpcChannel.ForAddress(server.Address);
        await using var call = await channel.StartCallAsync<EchoMessage, EchoMessage>(Service, "Stream", EchoMessage.Parser);
        var reading = Task.Run(async () =>
        {
            var seen = new List<ulong>();
            await foreach (var m in call.ReadAllAsync())
            {
                seen.Add(m.Seq);
            }
            return seen;
        });
        for (ulong i = 1; i <= 10_000; i++)
        {
            await call.WriteAsync(new EchoMessage { Seq = i, Body = ByteString.CopyFrom(new byte[i % 200]) }, flush: i % 100 == 0);
        }
        await call.FlushAsync();
        await call.CompleteRequestAsync();
        var got = await reading;
        Assert.Equal(Enumerable.Range(1, 10_000).Select(i => (ulong)i), got);
        Assert.Equal(GrpcStatusCode.Ok, call.Status);
    }

    [Fact]
    public async Task Handler_status_reaches_the_client_as_an_exception_with_that_code()
    {
        await using var server = await EchoServer.StartAsync();
        using var channel = GrpcChannel.ForAddress(server.Address);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() =>
            channel.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 1, FailWith = "not on the whitelist" }, EchoMessage.Parser));
        Assert.Equal(GrpcStatusCode.PermissionDenied, e.Status);
        Assert.Contains("not on the whitelist", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Oversized_message_is_refused_with_resource_exhausted()
    {
        await using var server = await EchoServer.StartAsync(maxMessageBytes: 1024);
        using var channel = GrpcChannel.ForAddress(server.Address);
        var e = await Assert.ThrowsAsync<GrpcCallException>(() =>
            channel.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 1, Body = ByteString.CopyFrom(new byte[4096]) }, EchoMessage.Parser));
        Assert.Equal(GrpcStatusCode.ResourceExhausted, e.Status);
    }

    [Fact]
    public async Task Request_that_is_not_grpc_is_refused_with_415()
    {
        await using var server = await EchoServer.StartAsync();
        using var http = new HttpClient { DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
        using var content = new StringContent("{}", System.Text.Encoding.UTF8, "application/json");
        using var response = await http.PostAsync(new Uri(server.Address, $"/{Service}/Stream"), content);
        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
    }

    [Fact]
    public async Task Calls_work_over_a_unix_domain_socket()
    {
        var path = Path.Combine(Path.GetTempPath(), $"sieveq-test-{Guid.NewGuid():N}.sock");
        try
        {
            await using var server = await EchoServer.StartAsync(path);
            using var channel = GrpcChannel.ForUnixSocket(path);
            var reply = await channel.UnaryAsync(Service, "Stream", new EchoMessage { Seq = 42 }, EchoMessage.Parser);
            Assert.Equal(42ul, reply.Seq);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void Framing_parser_fuzz_only_ever_raises_grpc_call_exceptions()
    {
        var rng = new Random(20261122);
        var valid = new EchoMessage { Seq = 7, Body = ByteString.CopyFrom(new byte[50]) }.ToByteArray();
        for (var i = 0; i < 20_000; i++)
        {
            byte[] frame;
            if (i % 2 == 0)
            {
                frame = new byte[rng.Next(0, 64)];
                rng.NextBytes(frame);
            }
            else
            {
                frame = [0, 0, 0, 0, (byte)valid.Length, .. valid];
                for (var k = rng.Next(1, 4); k > 0; k--)
                {
                    frame[rng.Next(frame.Length)] ^= (byte)rng.Next(1, 256);
                }
            }
            var seq = new ReadOnlySequence<byte>(frame);
            try
            {
                GrpcFraming.TryParse(ref seq, EchoMessage.Parser, 1024, out _);
            }
            catch (GrpcCallException)
            {
            }
        }
    }
}
