package dev.settle.runtime.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Forwards a loopback port to another, byte for byte: a broker that "appears" on a port where nothing listened
 * (the Pulsar client reaches the broker itself once a lookup through this port has told it the broker's address).
 */
final class TcpForwarder implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private TcpForwarder(ServerSocket server, int targetPort) {
        this.server = server;
        Thread acceptor = new Thread(
                () -> {
                    while (!server.isClosed()) {
                        try {
                            Socket client = server.accept();
                            Socket target = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                            sockets.add(client);
                            sockets.add(target);
                            pump(client, target);
                            pump(target, client);
                        } catch (IOException e) {
                            // Closed, or the target refused: the client sees its connection drop.
                        }
                    }
                },
                "forwarder-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    static TcpForwarder listen(int port, int targetPort) throws IOException {
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return new TcpForwarder(server, targetPort);
    }

    private static void pump(Socket from, Socket to) {
        Thread thread = new Thread(
                () -> {
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        in.transferTo(out);
                    } catch (IOException e) {
                        // One side closed.
                    } finally {
                        try {
                            to.close();
                            from.close();
                        } catch (IOException ignored) {
                            // Closing is best effort.
                        }
                    }
                },
                "forwarder-pump");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket socket : sockets) {
            socket.close();
        }
    }
}
