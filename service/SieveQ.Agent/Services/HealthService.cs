using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Agent.Services;

/// <summary>Agent.Health: the hosted parties' counters, and who the agent thinks is asking.</summary>
internal static class HealthService
{
    public static async Task HandleAsync(AgentCallContext agent, GrpcServerCall<HealthRequest, HealthReply> call)
    {
        var caller = agent.Peers.Of(call.HttpContext);
        agent.Policy.EnsureAllowed(caller);
        await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false);
        var reply = new HealthReply
        {
            Component = "agent",
            Healthy = true,
            Detail = $"agent '{agent.Entry.Name}'; caller {caller?.ToString() ?? "unidentified"}",
        };
        if (caller is not null)
        {
            reply.Counters["caller_pid"] = caller.Pid;
            reply.Counters["caller_uid"] = caller.Uid;
            if (caller.UserSid is not null)
            {
                // A SID is no number: it goes in the detail, in a form a client can pick out.
                reply.Detail += $"; caller_sid {caller.UserSid}";
            }
        }
        foreach (var (id, s) in agent.Senders.Started)
        {
            var st = s.Stats;
            reply.Counters[$"sender.{id}.accepted"] = st.Accepted;
            reply.Counters[$"sender.{id}.acknowledged_up_to"] = st.AcknowledgedUpTo;
            reply.Counters[$"sender.{id}.outstanding"] = st.Outstanding;
            reply.Counters[$"sender.{id}.reconnects"] = st.Reconnects;
            reply.Counters[$"sender.{id}.delivered"] = st.Delivered;
            reply.Counters[$"sender.{id}.rejected"] = st.Rejected;
            reply.Counters[$"sender.{id}.timed_out"] = st.TimedOut;
            reply.Counters[$"sender.{id}.verdict_unknown"] = st.VerdictUnknown;
            reply.Counters[$"sender.{id}.verdict_latency_samples"] = st.VerdictLatency.Count;
            reply.Counters[$"sender.{id}.verdict_latency_p50_us"] = st.VerdictLatency.P50Us;
            reply.Counters[$"sender.{id}.verdict_latency_p99_us"] = st.VerdictLatency.P99Us;
        }
        foreach (var (id, r) in agent.Receivers.Started)
        {
            var st = r.Receiver.Stats;
            reply.Counters[$"receiver.{id}.delivered"] = st.Delivered;
            reply.Counters[$"receiver.{id}.committed"] = st.Committed;
            reply.Counters[$"receiver.{id}.uncommitted"] = r.Uncommitted;
            reply.Counters[$"receiver.{id}.fetches"] = st.FetchesSent;
        }
        if (agent.Firewall is { } firewall)
        {
            foreach (var (name, value) in await firewall.GetCountersAsync(call.CallAborted).ConfigureAwait(false))
            {
                reply.Counters[name] = value;
            }
        }
        if (agent.RuleSets?.Last is { } published)
        {
            reply.Counters["ruleset.published.status"] = (long)published.Status;
            reply.Counters["ruleset.published.version"] = published.Version ?? 0;
            reply.Detail += $"; published rule set: {published.Status} ({published.Detail})";
        }
        await call.WriteAsync(reply, ct: call.CallAborted).ConfigureAwait(false);
    }
}
