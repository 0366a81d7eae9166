using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Scenarios;

/// <summary>
/// The canonical one-line form of messages and core outputs in scenario files. Hashes get short names in the
/// order they first appear (batches B1, B2, ...; states S1, S2, ...), so expectations read as values, not hex.
/// </summary>
internal sealed class ScenarioText
{
    private readonly Dictionary<Digest, string> _batches = [];
    private readonly Dictionary<Digest, string> _states = [];

    public string Batch(Digest hash) => Name(_batches, "B", hash);

    public string State(Digest hash) => Name(_states, "S", hash);

    private static string Name(Dictionary<Digest, string> names, string prefix, Digest hash)
    {
        if (!names.TryGetValue(hash, out var name))
        {
            name = $"{prefix}{names.Count + 1}";
            names[hash] = name;
        }
        return name;
    }

    /// <summary>A batch with its content: B1[c1000#1 c1000#2].</summary>
    public string Value(Batch? value) => value is null ? "none" : $"{Batch(value.Hash)}[{string.Join(' ', value.Requests.Select(Request))}]";

    private static string Request(ClientRequest r) => $"c{r.From}#{r.Sequence}";

    /// <summary>Null for outputs scenarios leave out: client replies and the records that only shorten recovery.</summary>
    public string? Output(int replica, CoreOutput output) => output switch
    {
        SendToReplicas b => $"{replica} -> all {Message(b.Message)}",
        SendTo { Message: Reply } => null,
        SendTo s => $"{replica} -> {s.To} {Message(s.Message)}",
        Decided d => $"{replica} decided i{d.ConsensusId} {Value(d.Value)}",
        Persist { Record: RegencyRecord r } => $"{replica} persists regency {r.Regency}",
        Persist { Record: CheckpointRecord c } => $"{replica} persists checkpoint i{c.ConsensusId} {State(c.StateHash)}",
        _ => null,
    };

    public string Message(BftMessage m) => m switch
    {
        ClientRequest r => $"REQUEST {Request(r)}",
        Forward f => $"FORWARD [{string.Join(' ', f.Requests.Select(Request))}]",
        Propose p => $"PROPOSE r{p.Regency} i{p.ConsensusId} {Value(p.Value)}",
        Write w => $"WRITE r{w.Regency} i{w.ConsensusId} {Batch(w.BatchHash)}",
        Accept a => $"ACCEPT r{a.Regency} i{a.ConsensusId} {Batch(a.BatchHash)}",
        Heartbeat h => $"HEARTBEAT r{h.Regency} decided i{h.LastDecided}",
        Stop s => s.TimedOut.Count == 0 ? $"STOP r{s.NewRegency}" : $"STOP r{s.NewRegency} carrying [{string.Join(' ', s.TimedOut.Select(Request))}]",
        StopData sd => $"STOPDATA r{sd.NewRegency} decided i{sd.LastDecided} certificates [{string.Join(' ', sd.Certificates.Select(Certificate))}]",
        Sync s => $"SYNC r{s.Regency} from [{string.Join(' ', s.Evidence.Select(e => e.From))}] i{s.ConsensusId} {Value(s.Value)} prior {Value(s.PriorValue)}",
        Checkpoint c => $"CHECKPOINT i{c.ConsensusId} {State(c.StateHash)}",
        StateRequest q => $"STATE-REQUEST after i{q.LastExecuted} {(q.WantBody ? "with body" : "hashes only")}",
        StateReply r => $"STATE-REPLY checkpoint i{r.CheckpointId} {State(r.StateHash)}{(r.Manifest is null ? "" : $" manifest of {r.Manifest.ChunkCount} chunks")} log [{string.Join(' ', r.Log.Select(LogEntry))}]",
        StateChunkRequest q => $"STATE-CHUNK-REQUEST checkpoint i{q.CheckpointId} chunk {q.Index}",
        StateChunk c => c.Held ? $"STATE-CHUNK checkpoint i{c.CheckpointId} chunk {c.Index} of {c.Data.Length} bytes" : $"STATE-CHUNK checkpoint i{c.CheckpointId} chunk {c.Index} refused",
        _ => m.Type.ToString(),
    };

    private string Certificate(PreparedCertificate c) => $"i{c.ConsensusId}:r{c.Regency}:{Batch(c.BatchHash)}";

    private string LogEntry(LoggedDecision e) => e.Value is null ? $"i{e.ConsensusId}:{Batch(e.BatchHash)}" : $"i{e.ConsensusId}:{Value(e.Value)}";

    /// <summary>The message type as scenario commands name it (STOPDATA, STATE-REPLY, ...).</summary>
    public static string TypeName(BftMessage m) => m switch
    {
        ClientRequest => "REQUEST",
        StateRequest => "STATE-REQUEST",
        StateReply => "STATE-REPLY",
        StateChunkRequest => "STATE-CHUNK-REQUEST",
        StateChunk => "STATE-CHUNK",
        _ => m.Type.ToString().ToUpperInvariant(),
    };
}
