namespace SieveQ.Firewall.QGuard;

/// <summary>
/// QGuard's indicators for the agent's host: CPU busy fraction, the agent's own queue lengths (messages
/// waiting to be acknowledged or committed) and the rate of connections it accepted since the last sample.
/// </summary>
public sealed class HostLoadSampler : ILoadSampler
{
    private readonly ICpuMeter cpu;
    private readonly Func<long> queueLength;
    private readonly Func<long> acceptedTotal;
    private readonly TimeProvider time;
    private long lastAccepted;
    private long lastStamp;

    /// <param name="queueLength">Messages queued in the agent right now.</param>
    /// <param name="acceptedTotal">Connections accepted since start (a counter; the sampler derives the rate).</param>
    public HostLoadSampler(ICpuMeter cpu, Func<long> queueLength, Func<long> acceptedTotal, TimeProvider? time = null)
    {
        ArgumentNullException.ThrowIfNull(cpu);
        ArgumentNullException.ThrowIfNull(queueLength);
        ArgumentNullException.ThrowIfNull(acceptedTotal);
        this.cpu = cpu;
        this.queueLength = queueLength;
        this.acceptedTotal = acceptedTotal;
        this.time = time ?? TimeProvider.System;
        lastAccepted = acceptedTotal();
        lastStamp = this.time.GetTimestamp();
    }

    /// <summary>/proc/stat where it exists, this process's CPU elsewhere.</summary>
    public static ICpuMeter DefaultCpuMeter() => ProcStatCpuMeter.IsAvailable ? new ProcStatCpuMeter() : new ProcessCpuMeter();

    public async ValueTask<LoadSample> SampleAsync(CancellationToken cancellationToken)
    {
        double busy = await cpu.ReadAsync(cancellationToken).ConfigureAwait(false);
        long accepted = acceptedTotal();
        long now = time.GetTimestamp();
        double seconds = time.GetElapsedTime(lastStamp, now).TotalSeconds;
        double rate = seconds > 0 ? Math.Max(0, accepted - lastAccepted) / seconds : 0;
        (lastAccepted, lastStamp) = (accepted, now);
        return new LoadSample(busy, Math.Max(0, queueLength()), rate);
    }
}
