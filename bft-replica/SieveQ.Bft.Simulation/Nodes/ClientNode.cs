using SieveQ.Bft.Client;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Nodes;

/// <summary>
/// A correct client: submits its planned requests at planned times (waiting when its window is
/// full), sends each to every replica, retransmits, and accepts a result on f+1 matching replies.
/// </summary>
internal sealed class ClientNode
{
    private readonly ClusterSimulation _sim;
    private readonly OrderingClient _client;
    private readonly long[] _submitAt;
    private int _nextToSubmit;
    private long _armedFor = long.MaxValue;

    public ClientNode(ClusterSimulation sim, int index, int requests)
    {
        _sim = sim;
        Index = index;
        Id = sim.Plan.ClientId(index);
        _client = new OrderingClient(Id, sim.Plan.Config, sim.ClientKeys.Signer(Id), sim.Plan.ClientRetransmitMs, sim.Plan.ClientMaxOutstanding);
        _submitAt = Enumerable.Range(0, requests).Select(_ => sim.TrafficRandom.Range(0, sim.Plan.TrafficEnd)).Order().ToArray();
    }

    public int Index { get; }
    public int Id { get; }
    public int Completed { get; private set; }
    public int Total => _submitAt.Length;
    public bool Finished => Completed == Total;
    public int Outstanding => _client.OutstandingCount;
    public int Unsubmitted => Total - _nextToSubmit;
    public long Retransmissions => _client.Retransmissions;
    public long FirstSubmitAt => _submitAt.Length > 0 ? _submitAt[0] : 0;

    public void ScheduleFirst()
    {
        if (_submitAt.Length > 0)
        {
            _sim.Schedule(_submitAt[0], new ClientSubmit(Index));
        }
    }

    public void OnSubmitDue()
    {
        while (_nextToSubmit < _submitAt.Length && _submitAt[_nextToSubmit] <= _sim.Now && _client.CanSubmit)
        {
            var payload = _sim.TrafficRandom.Bytes(_sim.TrafficRandom.Next(_sim.Plan.MaxPayloadBytes + 1));
            var request = _client.Submit(payload, _sim.Now)!;
            _sim.Checker.OnSubmitted(request);
            _nextToSubmit++;
            SendToAll(request);
        }
        if (_nextToSubmit < _submitAt.Length && _submitAt[_nextToSubmit] > _sim.Now)
        {
            _sim.Schedule(_submitAt[_nextToSubmit], new ClientSubmit(Index));
        }
        Rearm();
    }

    public void OnReply(Reply reply)
    {
        _client.OnReply(reply, _sim.Now);
        var done = _client.DrainCompleted();
        if (done.Count == 0)
        {
            return;
        }
        foreach (var c in done)
        {
            _sim.Checker.OnCompleted(Id, c);
            _sim.OnClientCompleted(this, c);
        }
        Completed += done.Count;
        // Window space opened: requests that waited for it go out now.
        OnSubmitDue();
    }

    public void OnWake(ClientWake w)
    {
        if (w.ArmedFor != _armedFor)
        {
            return;
        }
        _armedFor = long.MaxValue;
        foreach (var r in _client.DueRetransmissions(_sim.Now))
        {
            SendToAll(r);
        }
        Rearm();
    }

    private void SendToAll(ClientRequest r)
    {
        for (var replica = 0; replica < _sim.Plan.Replicas; replica++)
        {
            _sim.Transmit(Id, replica, r, null, 0);
        }
    }

    private void Rearm()
    {
        var want = _client.NextWakeup;
        if (want != long.MaxValue && want != _armedFor)
        {
            _armedFor = Math.Max(want, _sim.Now);
            _sim.Schedule(_armedFor, new ClientWake(Index, _armedFor));
        }
    }
}
