#!/usr/bin/env python3
# What each kind of etcd call the budget ledger makes costs etcd itself, in CPU per call: a
# three-member etcd 3.4 cluster of its own on 127.0.0.1 (temp folder, free ports, removed at the
# end), 16 client threads over kept-alive connections for 5 s per kind, and the members' CPU
# time (utime + stime from /proc) divided by the calls made. The kinds: the floor's
# create-if-absent txn and delete, a lease grant and revoke, a claim and a release transaction,
# and the claim's read-only view (the queue, the devices out of service and every claim in the
# fabric) with GUARDS group guards under P/budgets/ (where they were until 2026-12-07) and
# CLAIMS claim records in flight. Not a test; docs/benchmarks.md says what it showed.
# Usage: tests/bench/etcd/etcd_call_cost.py [GUARDS=1000] [CLAIMS=100]
import base64, http.client, json, os, shutil, socket, subprocess, sys, tempfile, threading, time

GUARDS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
CLAIMS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
P = '/fabgate/bench'


def b64(text):
    return base64.b64encode(text.encode()).decode()


def prefix_end(prefix):
    data = bytearray(prefix.encode())
    data[-1] += 1
    return base64.b64encode(bytes(data)).decode()


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_cluster(folder):
    ports = [(free_port(), free_port()) for _ in range(3)]
    initial = ','.join(f'm{i}=http://127.0.0.1:{peer}' for i, (_, peer) in enumerate(ports))
    members = []
    for i, (client, peer) in enumerate(ports):
        log = open(os.path.join(folder, f'm{i}.log'), 'w')
        members.append(subprocess.Popen(
            ['/usr/bin/etcd', '--name', f'm{i}', '--data-dir', os.path.join(folder, f'm{i}'),
             '--listen-peer-urls', f'http://127.0.0.1:{peer}',
             '--initial-advertise-peer-urls', f'http://127.0.0.1:{peer}',
             '--listen-client-urls', f'http://127.0.0.1:{client}',
             '--advertise-client-urls', f'http://127.0.0.1:{client}',
             '--initial-cluster', initial, '--initial-cluster-state', 'new'],
            stdout=log, stderr=subprocess.STDOUT))
    port = ports[0][0]
    for _ in range(100):
        try:
            call(http.client.HTTPConnection('127.0.0.1', port, timeout=2), '/v3/kv/put',
                 {'key': b64(P + '/ready'), 'value': b64('1')})
            return members, port
        except Exception:
            time.sleep(0.2)
    raise SystemExit('etcd_call_cost: the cluster did not form')


def call(connection, path, body):
    connection.request('POST', path, json.dumps(body))
    answer = connection.getresponse().read()
    return json.loads(answer)


def cpu_seconds(members):
    total = 0
    for member in members:
        with open(f'/proc/{member.pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf('SC_CLK_TCK')


def one_round(kind, connection, key):
    """Makes one round of `kind`; returns the calls it made."""
    if kind == 'txn create-if-absent + delete (floor)':
        call(connection, '/v3/kv/txn', {
            'compare': [{'key': b64(key), 'target': 'CREATE', 'result': 'EQUAL', 'create_revision': '0'}],
            'success': [{'request_put': {'key': b64(key), 'value': b64('x' * 100)}}]})
        call(connection, '/v3/kv/deleterange', {'key': b64(key)})
        return 2
    if kind == 'lease grant + revoke':
        lease = call(connection, '/v3/lease/grant', {'TTL': 15})
        call(connection, '/v3/lease/revoke', {'ID': lease['ID']})
        return 2
    if kind == 'claim txn + release txn':
        group = f'{P}/budgets/leaves-per-pod/pod=p{hash(key) % 500}'
        guard = f'{P}/guards/leaves-per-pod/pod=p{hash(key) % 500}'
        record = b64(json.dumps({'run': key, 'devices': ['p1-leaf3'], 'controller': 'c'}))
        call(connection, '/v3/kv/txn', {'success': [
            {'request_put': {'key': b64(group + '/claims/' + key), 'value': record}},
            {'request_put': {'key': b64(guard), 'value': b64(key)}}]})
        call(connection, '/v3/kv/txn', {'success': [
            {'request_range': {'key': b64(group + '/claims/' + key)}},
            {'request_delete_range': {'key': b64(group + '/claims/' + key)}},
            {'request_put': {'key': b64(guard), 'value': b64(key)}}]})
        return 2
    ranges = [{'request_range': {'key': b64(P + part), 'range_end': prefix_end(P + part)}}
              for part in ('/queue/', '/service/', '/budgets/')]
    call(connection, '/v3/kv/txn', {'success': ranges})
    return 1


def measure(kind, members, port, threads=16, seconds=5.0):
    stop = threading.Event()
    counts = [0] * threads

    def work(index):
        connection = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
        serial = 0
        while not stop.is_set():
            serial += 1
            counts[index] += one_round(kind, connection, f'{P}/f/{index}-{serial}')

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    before, started = cpu_seconds(members), time.time()
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    spent, wall = cpu_seconds(members) - before, time.time() - started
    calls = sum(counts)
    print(f'  {kind:58s} {calls / wall:7.0f} calls/s  etcd CPU {1000 * spent / calls:6.2f} ms per call')


def main():
    folder = tempfile.mkdtemp(prefix='fabgate-etcd-call-cost-')
    members = []
    try:
        members, port = start_cluster(folder)
        connection = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
        print(f'etcd_call_cost: 3 members on 127.0.0.1; load average {open("/proc/loadavg").read().split()[0]}')
        for kind in ('txn create-if-absent + delete (floor)', 'lease grant + revoke',
                     'claim txn + release txn'):
            measure(kind, members, port)
        for i in range(CLAIMS):
            call(connection, '/v3/kv/put', {
                'key': b64(f'{P}/budgets/leaves-per-pod/pod=p{i}/claims/run-{i}'),
                'value': b64(json.dumps({'run': f'run-{i}', 'operator': 'op', 'change': 'c',
                                         'controller': 'ctl', 'devices': [f'p{i}-leaf3'],
                                         'claimed_at': '2026-12-07T00:00:00Z'}))})
        measure(f'claim view, {CLAIMS} claims in flight, no guard in it', members, port)
        for i in range(GUARDS // 2):
            for budget in ('spines-per-pod', 'leaves-per-pod'):
                call(connection, '/v3/kv/put', {
                    'key': b64(f'{P}/budgets/{budget}/pod=p{i}/guard'), 'value': b64('run-x')})
        measure(f'claim view, {CLAIMS} claims and {GUARDS} guards in it', members, port)
    finally:
        for member in members:
            member.kill()
            member.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == '__main__':
    main()
