using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Threads other than the execution thread read the sieve only through the read model it publishes after each
/// execution: immutable, so a read never waits for an execution and always sees one whole execution.
/// </summary>
public sealed class ReadModelTests : IClassFixture<TestWorld>
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(10);
    private readonly TestWorld _w;
    private long _cid;
    private long _seq;

    public ReadModelTests(TestWorld w) => _w = w;

    /// <summary>Passes everything; when armed, the next evaluation stops until released, in the middle of an execution.</summary>
    private sealed class PausingRules : IApplicationRules, IDisposable
    {
        private readonly RoutePolicy _inner = TestWorld.AllRoutes();
        private readonly ManualResetEventSlim _entered = new();
        private readonly ManualResetEventSlim _release = new();
        private volatile bool _armed;

        public void Arm() => _armed = true;

        public bool WaitEntered() => _entered.Wait(Patience);

        public void Release() => _release.Set();

        public RuleVerdict Evaluate(in RuleInput input)
        {
            if (_armed)
            {
                _armed = false;
                _entered.Set();
                _release.Wait(Patience);
            }
            return _inner.Evaluate(input);
        }

        public byte[] SnapshotState() => _inner.SnapshotState();

        public void RestoreState(ReadOnlySpan<byte> state) => _inner.RestoreState(state);

        public void Dispose()
        {
            _entered.Dispose();
            _release.Dispose();
        }
    }

    private Bft.Core.ExecutionOutcome Execute(SieveReplicaApplication app, int from, params byte[][] items) =>
        app.Execute(TestWorld.At(++_cid, 1_000 + _cid), [TestWorld.Request(from, ++_seq, items)]);

    [Fact]
    public async Task While_an_execution_is_in_progress_other_threads_read_the_last_published_one_without_waiting()
    {
        using var rules = new PausingRules();
        var app = _w.Replica(rules: rules);
        Execute(app, 10, _w.Message(1, 1, 100, "a"), _w.Message(1, 2, 100, "b"));
        var published = app.ReadModel;
        Assert.Equal(2, published.QueueLength(100));

        rules.Arm();
        var executing = Task.Run(() => Execute(app, 10, _w.Message(1, 3, 100, "c")));
        Assert.True(rules.WaitEntered());

        // The execution thread is stopped inside Execute: a reader that needed it would never finish.
        var read = await Task.Run(() =>
        {
            var m = app.ReadModel;
            var pending = m.PendingFor(100, 10)!;
            var wanted = pending.Items.Select(i => new BodyWanted(i.Sender, i.RouteSeq, i.DataDigest)).ToList();
            return (m.Version, Length: m.QueueLength(100), Pending: pending.Items.Select(i => i.SenderSeq).ToList(),
                Bodies: m.FindBodies(new BodyFetchRequest(100, 0, 1, wanted, 1)).Count);
        }).WaitAsync(Patience);
        Assert.Equal(published.Version, read.Version);
        Assert.Equal(2, read.Length);
        Assert.Equal([1L, 2L], read.Pending);
        Assert.Equal(2, read.Bodies);

        rules.Release();
        var outcome = await executing.WaitAsync(Patience);
        // Published before Execute returned its outputs: whoever gets the outputs finds the model at least as new.
        Assert.Equal(published.Version + 1, app.ReadModel.Version);
        Assert.Equal(3, app.ReadModel.QueueLength(100));
        Assert.Equal([3L], OutboxContents.Of(outcome).Batches.Single().Items.Select(i => i.SenderSeq));
    }

    [Fact]
    public void A_published_model_never_changes_afterwards()
    {
        var app = _w.Replica();
        Execute(app, 10, _w.Message(2, 1, 101, "x"), _w.Message(2, 2, 101, "y"));
        var before = app.ReadModel;
        var items = before.PendingFor(101, 10)!.Items;

        Execute(app, 101, ReceiverAckCodec.Encode(101, [new(2, 2)], _w.ReceiverSigning[101]));
        Execute(app, 10, _w.Message(2, 3, 101, "z"));

        Assert.Equal(2, before.QueueLength(101));
        Assert.Equal(items, before.PendingFor(101, 10)!.Items);
        Assert.True(before.Queue(101).TryGet(2, 1, out var kept) && kept!.SenderSeq == 1);
        Assert.Equal(1, app.ReadModel.QueueLength(101));
        Assert.Equal([3L], app.ReadModel.PendingFor(101, 10)!.Items.Select(i => i.SenderSeq));
        Assert.False(app.ReadModel.Queue(101).TryGet(2, 1, out _));
    }

    [Fact]
    public async Task A_reader_racing_many_executions_always_sees_whole_executions_in_order()
    {
        var app = _w.Replica();
        using var stop = new CancellationTokenSource();
        var reader = Task.Run(() =>
        {
            long lastVersion = 0;
            var reads = 0;
            while (!stop.IsCancellationRequested || reads == 0)
            {
                var m = app.ReadModel;
                Assert.True(m.Version >= lastVersion);
                lastVersion = m.Version;
                var q = m.Queue(100);
                var pending = q.Pending().ToList();
                Assert.Equal(q.Count, pending.Count);
                // Each execution adds two messages of sender 1 and acknowledges whole pairs, so a whole execution shows an even count.
                Assert.Equal(0, pending.Count % 2);
                Assert.Equal(pending.Select(i => i.RouteSeq), Enumerable.Range(0, pending.Count).Select(k => pending[0].RouteSeq + k));
                reads++;
            }
            return reads;
        });

        for (var i = 0; i < 150; i++)
        {
            var seq = 2L * i;
            var items = new List<byte[]> { _w.Message(1, seq + 1, 100, $"m{seq + 1}"), _w.Message(1, seq + 2, 100, $"m{seq + 2}") };
            if (i >= 4)
            {
                items.Add(ReceiverAckCodec.Encode(100, [new(1, seq - 6)], _w.ReceiverSigning[100]));
            }
            Execute(app, 10, [.. items]);
        }
        await stop.CancelAsync();
        Assert.True(await reader.WaitAsync(Patience) > 0);
        Assert.Equal(8, app.ReadModel.QueueLength(100));
    }

    [Fact]
    public void A_snapshot_restore_publishes_the_restored_state_and_counts_the_jump()
    {
        var source = _w.Replica();
        Execute(source, 10, _w.Message(3, 1, 100, "p"), _w.Message(3, 2, 101, "q"));
        var snapshot = source.TakeSnapshot();
        var target = _w.Replica();
        Execute(target, 10, _w.Message(1, 1, 101, "other"));

        target.RestoreSnapshot(snapshot);

        var m = target.ReadModel;
        Assert.Equal(1, m.Restores);
        Assert.Equal([(3, 1L)], m.PendingFor(100, 10)!.Items.Select(i => (i.Sender, i.SenderSeq)));
        Assert.Equal([(3, 2L)], m.PendingFor(101, 10)!.Items.Select(i => (i.Sender, i.SenderSeq)));
    }
}
