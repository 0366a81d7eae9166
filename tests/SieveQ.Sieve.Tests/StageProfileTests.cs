using System.Diagnostics;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Hosting.Diagnostics;
using static SieveQ.Sieve.Hosting.Diagnostics.StageTrace;

namespace SieveQ.Sieve.Tests;

/// <summary>The stage profile `bench e2e --trace` prints: per stage, time since numbering, first process and (f+1)-th.</summary>
public sealed class StageProfileTests
{
    private static long Ms(double ms) => (long)(ms * Stopwatch.Frequency / 1000.0);

    [Fact]
    public void Each_stage_is_timed_from_numbering_by_the_first_process_and_by_the_f_plus_1_th()
    {
        var marks = new List<TraceMark>();
        for (var seq = 1; seq <= 3; seq++)
        {
            var t0 = Ms(seq * 1000);
            marks.Add(new TraceMark(StageNames.SenderNumbered, 7, seq, t0, 1));
            marks.Add(new TraceMark(StageNames.PreSqPassed, 7, seq, t0 + Ms(2), 2));
            // Four replicas execute at +5, +6, +9 and +20 ms; replica 10 also passes a second time (a retransmission).
            marks.Add(new TraceMark(StageNames.ReplicaExecuted, 7, seq, t0 + Ms(6), 11));
            marks.Add(new TraceMark(StageNames.ReplicaExecuted, 7, seq, t0 + Ms(5), 10));
            marks.Add(new TraceMark(StageNames.ReplicaExecuted, 7, seq, t0 + Ms(4), 10));
            marks.Add(new TraceMark(StageNames.ReplicaExecuted, 7, seq, t0 + Ms(9), 12));
            marks.Add(new TraceMark(StageNames.ReplicaExecuted, 7, seq, t0 + Ms(20), 13));
        }
        // A message never numbered in the trace is left out; so is one of another sender with the same number.
        marks.Add(new TraceMark(StageNames.PreSqPassed, 8, 1, Ms(99_000), 2));

        var profile = StageProfile.Compute(marks, f: 1);

        Assert.Equal([StageNames.SenderNumbered, StageNames.PreSqPassed, StageNames.ReplicaExecuted], profile.Select(p => p.Stage));
        Assert.All(profile, p => Assert.Equal(3, p.Samples));
        Assert.Equal(2.0, profile[1].FirstP50Ms, 3);
        Assert.Null(profile[1].QuorumP50Ms);
        Assert.Equal(4.0, profile[2].FirstP50Ms, 3);
        Assert.Equal(6.0, profile[2].QuorumP50Ms!.Value, 3);
    }

    [Fact]
    public void Trace_files_are_read_back_and_lines_that_do_not_parse_are_skipped()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-trace-test-").FullName;
        try
        {
            File.WriteAllText(Path.Combine(dir, "4242.trace"), $"{StageNames.PreSqPassed}\t3\t64\t123456\nnot a mark\n{StageNames.ApplicationRead}\t3\tx\t5\n");
            File.WriteAllText(Path.Combine(dir, "notapid.trace"), $"{StageNames.PreSqPassed}\t3\t64\t1\n");
            var marks = ReadFolder(dir);
            Assert.Equal([new TraceMark(StageNames.PreSqPassed, 3, 64, 123456, 4242)], marks);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
