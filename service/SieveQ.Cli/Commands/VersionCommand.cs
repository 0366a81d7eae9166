using System.CommandLine;
using System.Reflection;

namespace SieveQ.Cli.Commands;

internal static class VersionCommand
{
    public static Command Build()
    {
        var cmd = new Command("version", "Print the version of this build and of the BFT wire protocol.");
        cmd.SetAction(_ =>
        {
            var v = typeof(VersionCommand).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "unknown";
            Console.WriteLine($"sieveq {v}");
            Console.WriteLine($"bft wire protocol v{SieveQ.Bft.Codec.MessageCodec.Version}");
            return 0;
        });
        return cmd;
    }
}
