using System.Globalization;
using Google.Protobuf;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace SieveQ.Transport;

/// <summary>Maps gRPC methods (any of unary, client, server or bidirectional streaming) onto Kestrel endpoints.</summary>
public static class GrpcEndpointRouteBuilderExtensions
{
    /// <param name="requestDeadline">
    /// For a method whose client sends one request (unary, server streaming): the time from the call's start within
    /// which its reads must complete, or the call ends with DEADLINE_EXCEEDED. Null for client and bidirectional streams.
    /// </param>
    public static IEndpointConventionBuilder MapGrpcMethod<TRequest, TResponse>(
        this IEndpointRouteBuilder endpoints,
        string service,
        string method,
        MessageParser<TRequest> parser,
        Func<GrpcServerCall<TRequest, TResponse>, Task> handler,
        int maxMessageBytes = GrpcFraming.DefaultMaxMessageBytes,
        TimeSpan? requestDeadline = null)
        where TRequest : class, IMessage<TRequest>
        where TResponse : class, IMessage<TResponse>
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentNullException.ThrowIfNull(handler);
        var logger = endpoints.ServiceProvider.GetService<ILoggerFactory>()?.CreateLogger("SieveQ.Transport.Grpc");
        return endpoints.MapPost($"/{service}/{method}", async context =>
        {
            if (!HttpProtocol.IsHttp2(context.Request.Protocol))
            {
                context.Response.StatusCode = StatusCodes.Status426UpgradeRequired;
                return;
            }
            if (context.Request.ContentType is not { } ct || !ct.StartsWith("application/grpc", StringComparison.Ordinal))
            {
                context.Response.StatusCode = StatusCodes.Status415UnsupportedMediaType;
                return;
            }
            // gRPC streams are long-lived and legitimately quiet (a receiver's commits, a replica's ACKs):
            // Kestrel's minimum body rate would end them after its grace period and its total body size
            // would end a busy one after 30 MB. Each message stays bounded by maxMessageBytes, and the
            // connections behind the stream by the host's Kestrel limits.
            if (context.Features.Get<Microsoft.AspNetCore.Server.Kestrel.Core.Features.IHttpMinRequestBodyDataRateFeature>() is { } minRate)
            {
                minRate.MinDataRate = null;
            }
            if (context.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } maxBody)
            {
                maxBody.MaxRequestBodySize = null;
            }
            context.Response.ContentType = "application/grpc";
            context.Response.Headers["grpc-accept-encoding"] = "identity";
            // Headers go out at once so a streaming client's SendAsync returns before the first response.
            await context.Response.StartAsync(context.RequestAborted).ConfigureAwait(false);
            var call = new GrpcServerCall<TRequest, TResponse>(context, parser, maxMessageBytes) { RequestDeadline = requestDeadline };
            var status = GrpcStatusCode.Ok;
            string? detail = null;
            try
            {
                await handler(call).ConfigureAwait(false);
            }
            catch (GrpcCallException e)
            {
                status = e.Status;
                detail = e.Message;
            }
            catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
            {
                return;
            }
            catch (IOException) when (context.RequestAborted.IsCancellationRequested)
            {
                return;
            }
#pragma warning disable CA1031 // a handler's unexpected failure must become a gRPC status, not a dropped connection
            catch (Exception e)
#pragma warning restore CA1031
            {
                logger?.LogError(e, "gRPC handler {Service}/{Method} failed", service, method);
                status = GrpcStatusCode.Internal;
                detail = "internal error";
            }
            try
            {
                await call.FlushAsync(context.RequestAborted).ConfigureAwait(false);
                context.Response.AppendTrailer("grpc-status", ((int)status).ToString(CultureInfo.InvariantCulture));
                if (detail is not null)
                {
                    context.Response.AppendTrailer("grpc-message", Uri.EscapeDataString(detail));
                }
            }
            catch (OperationCanceledException)
            {
                // The peer went away; nothing left to tell it.
            }
        });
    }
}
