using System.CommandLine;
using SieveQ.Cli.Commands;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>One spelling for a deployment on every command, and a deployment that keeps itself out of git.</summary>
public class DeploymentOptionTests
{
    public static TheoryData<string> Commands => new() { "up", "status" };

    [Theory]
    [MemberData(nameof(Commands))]
    public void Both_spellings_name_the_same_deployment(string name)
    {
        var command = Build(name);
        foreach (var spelling in new[] { "--dir", "--deployment" })
        {
            var parsed = command.Parse([spelling, "/tmp/some-deployment"]);
            Assert.Empty(parsed.Errors);
            Assert.Equal("/tmp/some-deployment", parsed.GetValue<DirectoryInfo>("--deployment")!.FullName);
        }
    }

    [Theory]
    [MemberData(nameof(Commands))]
    public void Without_the_option_the_local_deployment_is_meant(string name)
    {
        var parsed = Build(name).Parse([]);
        Assert.Empty(parsed.Errors);
        Assert.Equal(Path.GetFullPath(Path.Combine(".sieveq", "local")), parsed.GetValue<DirectoryInfo>("--deployment")!.FullName);
    }

    [Fact]
    public void A_component_host_refuses_to_start_without_a_deployment()
    {
        var parsed = PreSqCommand.Build().Parse(["--id", "4"]);
        Assert.Contains(parsed.Errors, e => e.Message.Contains("--deployment", StringComparison.Ordinal));
    }

    [Fact]
    public void A_new_deployment_ignores_itself_in_git_and_keeps_an_operators_own_file()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-gitignore-").FullName;
        try
        {
            DeploymentBootstrap.Create(Path.Combine(dir, "a"), new LocalDeploymentSpec());
            Assert.Equal(["*"], File.ReadAllLines(Path.Combine(dir, "a", ".gitignore")).Where(l => !l.StartsWith('#')));

            Directory.CreateDirectory(Path.Combine(dir, "b"));
            File.WriteAllText(Path.Combine(dir, "b", ".gitignore"), "state/\n");
            DeploymentBootstrap.Create(Path.Combine(dir, "b"), new LocalDeploymentSpec());
            Assert.Equal("state/\n", File.ReadAllText(Path.Combine(dir, "b", ".gitignore")));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static Command Build(string name) => name switch
    {
        "up" => UpCommand.Build(),
        "status" => StatusCommand.Build(),
        _ => throw new ArgumentOutOfRangeException(nameof(name)),
    };
}
