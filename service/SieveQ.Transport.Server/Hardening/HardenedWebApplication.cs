using System.Reflection;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace SieveQ.Transport.Hardening;

/// <summary>
/// The web application behind a component's gRPC endpoint (the pre-SQ's, the replica-SQ's): the slim builder,
/// logging only through the component's own factory (rate-limited, on stderr), Kestrel hardened by
/// <see cref="KestrelHardening"/> on the one URL of the deployment (TLS 1.3 with the component's certificate for https://), and a short shutdown drain.
/// </summary>
public static class HardenedWebApplication
{
    /// <summary>The component maps its methods on the built application and starts it.</summary>
    public static WebApplicationBuilder CreateBuilder(Assembly component, ILoggerFactory logs, Uri url, KestrelLimits limits,
        SourceConnectionLimiter limiter, PrefaceDeadline preface, X509Certificate2? certificate = null)
    {
        ArgumentNullException.ThrowIfNull(component);
        var web = WebApplication.CreateSlimBuilder(new WebApplicationOptions { ApplicationName = component.GetName().Name });
        web.Logging.ClearProviders();
        web.Services.AddSingleton(logs);
        // The components end their open streams before Kestrel stops, so a short drain is enough.
        web.Services.Configure<HostOptions>(h => h.ShutdownTimeout = TimeSpan.FromSeconds(5));
        web.WebHost.ConfigureKestrel(k =>
        {
            KestrelHardening.Apply(k, limits);
            KestrelHardening.Listen(k, url, limiter, preface, certificate);
        });
        return web;
    }
}
