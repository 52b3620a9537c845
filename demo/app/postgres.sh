#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The shop's database: a fresh PostgreSQL cluster (small: the demo runs
# on a shared machine), the catalogue's products and the orders table.
set -e
BIN=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
DATA=/var/lib/postgresql/demo
mkdir -p /run/postgresql && chown postgres /run/postgresql
su postgres -s /bin/sh -c "$BIN/initdb -D $DATA -A trust -U postgres" >/dev/null
# the other pods reach it over their network
echo "host all all 0.0.0.0/0 trust" >>$DATA/pg_hba.conf
# seeded before it listens on the network: once the port is open, the
# shop can use it
su postgres -s /bin/sh -c "$BIN/pg_ctl -D $DATA -w -l /tmp/postgres.log start -o \"-c listen_addresses=''\"" >/dev/null
psql -q -h /var/run/postgresql -U postgres -c 'CREATE DATABASE shop'
psql -q -h /var/run/postgresql -U postgres -d shop <<'SQL'
CREATE TABLE products (id int PRIMARY KEY, name text, category text, price_cents int);
INSERT INTO products VALUES
 (1, 'Mug', 'kitchen', 899), (2, 'Kettle', 'kitchen', 3499), (3, 'Tea towel', 'kitchen', 650),
 (4, 'Salt and pepper', 'kitchen', 1299), (5, 'Sunglasses', 'clothing', 1999),
 (6, 'Tank top', 'clothing', 1850), (7, 'Socks', 'clothing', 799), (8, 'Loafers', 'clothing', 8900),
 (9, 'Watering can', 'garden', 2450), (10, 'Terracotta pot', 'garden', 1190),
 (11, 'Secateurs', 'garden', 2290), (12, 'Linux Kernel Development', 'books', 3900),
 (13, 'BPF Performance Tools', 'books', 5200), (14, 'The C Programming Language', 'books', 4100);
CREATE TABLE orders (id text PRIMARY KEY, customer text, cents int, currency text,
                     placed timestamptz DEFAULT now());
SQL
su postgres -s /bin/sh -c "$BIN/pg_ctl -D $DATA -w stop" >/dev/null
echo "postgres: seeded"
exec su postgres -s /bin/sh -c "exec $BIN/postgres -D $DATA -c listen_addresses=* \
	-c shared_buffers=16MB -c max_connections=60 -c fsync=off"
