using System.CommandLine;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

// The console process: `serve` runs the web console; `init` and `add-user` manage its local accounts. A password is
// generated and printed once, when its account is created, and never again (docs/console.md).
var deployment = new Option<DirectoryInfo>("--deployment") { Description = "Deployment directory (holding deployment.json, controller.json, console.json).", Required = true };

var url = new Option<string?>("--url") { Description = "Listen URL (https:// with console.json's tls certificate, or http:// on a loopback address; default: console.json's)." };
var controllerUrl = new Option<string?>("--controller") { Description = "The controller's URL (default: the one in the deployment's controller.json)." };
var controllerPin = new Option<string?>("--controller-pin") { Description = "With an https:// --controller: its TLS key pin (base64 SHA-256 of the SubjectPublicKeyInfo, as in controller.json)." };
var tlsCertificate = new Option<string?>("--tls-certificate") { Description = "PEM certificate to serve https:// --url with, instead of console.json's tls (with --tls-key; re-read when it changes)." };
var tlsKey = new Option<string?>("--tls-key") { Description = "The --tls-certificate's PEM private key (owner-only)." };
var serve = new Command("serve", "Run the web console until SIGTERM, Ctrl-C or a service stop.") { deployment, url, controllerUrl, controllerPin, tlsCertificate, tlsKey };
serve.SetAction(async (parse, ct) =>
{
    WebApplication app;
    try
    {
        if (parse.GetValue(controllerPin) is not null && parse.GetValue(controllerUrl) is null)
        {
            throw new DeploymentException("--controller-pin needs --controller");
        }
        var settings = new ConsoleServeSettings(parse.GetValue(url), parse.GetValue(controllerUrl), parse.GetValue(controllerPin),
            parse.GetValue(tlsCertificate) is { } c ? Path.GetFullPath(c) : null, parse.GetValue(tlsKey) is { } k ? Path.GetFullPath(k) : null);
        app = ConsoleWebApp.Build(parse.GetValue(deployment)!.FullName, settings, []);
    }
    catch (DeploymentException e)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 1;
    }
    await app.RunAsync(ct).ConfigureAwait(false);
    return 0;
});

var administrator = new Option<string>("--administrator") { Description = "Name of the first administrator account.", DefaultValueFactory = _ => "admin" };
var controllerRole = new Option<string>("--controller-role")
{
    Description = "The console's role at the controller: operator (quarantine, readmit, rule sets...) or administrator (also start, stop and replace pre-SQs).",
    DefaultValueFactory = _ => "operator",
};
controllerRole.AcceptOnlyFromAmong("operator", "administrator");
var init = new Command("init", "Create console.json, the console's management key (pinned in controller.json) and the first administrator; prints that password once.") { deployment, administrator, controllerRole };
init.SetAction(async (parse, ct) =>
{
    try
    {
        var role = parse.GetValue(controllerRole) == "administrator" ? SieveQ.Controller.Access.ManagementRole.Administrator : ConsoleSetup.DefaultControllerRole;
        var (cfg, password) = await ConsoleSetup.InitAsync(parse.GetValue(deployment)!.FullName, parse.GetValue(administrator)!, role, ct).ConfigureAwait(false);
        Console.WriteLine($"console {cfg.Url}");
        if (password is not null)
        {
            Console.WriteLine($"administrator {parse.GetValue(administrator)} password {password}");
        }
        return 0;
    }
    catch (Exception e) when (e is DeploymentException or ArgumentException or IOException or UnauthorizedAccessException)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 1;
    }
});

var user = new Option<string>("--user") { Description = "Account name (letters, digits, '-', '_', '.').", Required = true };
var role = new Option<ConsoleRole>("--role") { Description = "viewer, operator or administrator.", Required = true };
var addUser = new Command("add-user", "Add a local account with a generated password, printed once.") { deployment, user, role };
addUser.SetAction(async (parse, ct) =>
{
    try
    {
        var dir = DeploymentFile.Load(parse.GetValue(deployment)!.FullName);
        var cfg = ConsoleConfig.Load(dir.BaseDirectory);
        var store = ConsoleUserStore.Open(dir.Resolve(cfg.UsersFile), cfg);
        var password = await store.AddAsync(parse.GetValue(user)!, parse.GetValue(role), ct).ConfigureAwait(false);
        Console.WriteLine($"user {parse.GetValue(user)} ({ConsolePolicies.RoleName(parse.GetValue(role))}) password {password}");
        return 0;
    }
    catch (Exception e) when (e is DeploymentException or ArgumentException or InvalidOperationException or IOException)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 1;
    }
});

var tlsUrl = new Option<string>("--url") { Description = "The https:// URL to serve on (e.g. https://0.0.0.0:8443).", Required = true };
var tlsNames = new Option<string[]>("--name") { Description = "A host name browsers use for the console (repeatable), for the certificate's subjectAlternativeName; the --url address is added unless it is 0.0.0.0 or [::].", AllowMultipleArgumentsPerToken = false };
var initTls = new Command("init-tls", "Create a self-signed TLS certificate for the console (keys/console-tls.crt and .key) and serve https:// on --url; prints its SHA-256 fingerprint.") { deployment, tlsUrl, tlsNames };
initTls.SetAction(parse =>
{
    try
    {
        var (cfg, fingerprint) = ConsoleTls.CreateCertificate(parse.GetValue(deployment)!.FullName, parse.GetValue(tlsUrl)!, parse.GetValue(tlsNames) ?? []);
        Console.WriteLine($"console {cfg.Url}");
        Console.WriteLine($"certificate {cfg.Tls!.CertificateFile} sha256 fingerprint {fingerprint}");
        return 0;
    }
    catch (Exception e) when (e is DeploymentException or IOException or UnauthorizedAccessException)
    {
        Console.Error.WriteLine($"error: {e.Message}");
        return 1;
    }
});

var root = new RootCommand("SieveQ web admin console") { serve, init, addUser, initTls };
return await root.Parse(args).InvokeAsync().ConfigureAwait(false);
