// Lone TCP Cubic flow: sender -- router -- receiver, two point-to-point links of `rate` and
// `oneWayUs`/2 each (as a sharebuf star of two hosts); prints where slow start ends.
// Written for sharebuf's HyStart check (docs/transports/cubic.md); uses only ns-3's public API.
// Build: see build.sh beside this file (Debian's libns3-dev 3.37).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include <cstdio>
#include <limits>

using namespace ns3;

static uint32_t g_mss = 1400;
static bool g_exited = false;
static uint32_t g_cwnd = 0;

static void
OnCwnd(uint32_t, uint32_t now)
{
    g_cwnd = now;
    std::printf("cwnd %.9f %u %.2f\n", Simulator::Now().GetSeconds(), now, double(now) / g_mss);
}

static void
OnSsthresh(uint32_t old, uint32_t now)
{
    std::printf("ssthresh %.9f %u %.2f (cwnd %u)\n", Simulator::Now().GetSeconds(), now,
                double(now) / g_mss, g_cwnd);
    if (!g_exited && now < std::numeric_limits<uint32_t>::max())
    {
        g_exited = true;
        std::printf("EXIT_SLOW_START t_s=%.9f cwnd_bytes=%u cwnd_segments=%.2f\n",
                    Simulator::Now().GetSeconds(), now, double(now) / g_mss);
    }
}

static void
Hook()
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow",
                                  MakeCallback(&OnCwnd));
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/SlowStartThreshold",
                                  MakeCallback(&OnSsthresh));
}

int
main(int argc, char* argv[])
{
    uint32_t initCwnd = 10;
    std::string rate = "10Gbps";
    double oneWayUs = 40.0; // 80 us round-trip propagation, 20 us per link
    bool hystart = true;
    bool timestamp = true; // ns3dc enables TCP timestamps (1 ms ticks in ns-3)
    uint64_t bytes = 20000000;
    double stopS = 0.02;
    CommandLine cmd;
    cmd.AddValue("initCwnd", "initial window, segments", initCwnd);
    cmd.AddValue("mss", "segment size, bytes", g_mss);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("oneWayUs", "one-way propagation delay of the path, us", oneWayUs);
    cmd.AddValue("hystart", "TcpCubic::HyStart", hystart);
    cmd.AddValue("timestamp", "TcpSocketBase::Timestamp", timestamp);
    cmd.AddValue("bytes", "bytes to send", bytes);
    cmd.AddValue("stop", "simulated seconds", stopS);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(g_mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(0)); // as ns3dc's ABM example
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 30));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 30));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamp));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(5)));

    NodeContainer n;
    n.Create(3); // 0 sender, 1 router, 2 receiver
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(oneWayUs / 2)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
    NetDeviceContainer d01 = p2p.Install(n.Get(0), n.Get(1));
    NetDeviceContainer d12 = p2p.Install(n.Get(1), n.Get(2));
    InternetStackHelper ip;
    ip.Install(n);
    Ipv4AddressHelper a;
    a.SetBase("10.1.1.0", "255.255.255.0");
    a.Assign(d01);
    a.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = a.Assign(d12);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    uint16_t port = 9;
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    src.SetAttribute("MaxBytes", UintegerValue(bytes));
    src.SetAttribute("SendSize", UintegerValue(g_mss));
    ApplicationContainer sa = src.Install(n.Get(0));
    sa.Start(Seconds(0.001));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer ka = sink.Install(n.Get(2));
    ka.Start(Seconds(0.0));
    Simulator::Schedule(Seconds(0.001) + NanoSeconds(1), &Hook);
    Simulator::Stop(Seconds(stopS));
    Simulator::Run();
    Simulator::Destroy();
    if (!g_exited)
    {
        std::printf("EXIT_SLOW_START none\n");
    }
    return 0;
}
