#!/bin/sh
# bench/hbase/prep.sh OUT_DIR: the two CSV files both engines of bench/hbase/run.sh load, made
# once from the bundled archive (data/beijing, CC BY 4.0): OUT_DIR/sensor.csv (header
# STATION,TS,PM25,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,WD,WSPM; one row per station and
# hour, 420,768 rows; TS as 'YYYY-MM-DD HH:00:00', Beijing local time as in the tour; 'NA'
# for a missing value) and OUT_DIR/stations.csv (STATION,LONGITUDE,LATITUDE,TYPE for the
# archive's 12 stations, names as in the tour's load.sql). Plain CSV without quotes, so the
# Java side splits lines on commas. Not here: loading them (run.sh).
set -eu
OUT=$1
mkdir -p "$OUT"
if [ ! -s "$OUT/sensor.csv" ]; then
  { echo "STATION,TS,PM25,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,WD,WSPM"
    for f in data/beijing/PRSA_Data_*.csv.gz; do
      # No,year,month,day,hour,PM2.5,PM10,SO2,NO2,CO,O3,TEMP,PRES,DEWP,RAIN,wd,WSPM,station
      gunzip -c "$f" | awk -F, 'NR > 1 { gsub(/["\r]/, "");
        printf "%s,%04d-%02d-%02d %02d:00:00,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
          $18, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 }'
    done; } > "$OUT/sensor.csv.tmp"
  mv "$OUT/sensor.csv.tmp" "$OUT/sensor.csv"
fi
if [ ! -s "$OUT/stations.csv" ]; then
  { echo "STATION,LONGITUDE,LATITUDE,TYPE"
    gunzip -c data/beijing/Beijing_AirQuality_Stations.csv.gz | awk -F, 'NR > 1 {
      sub(/\r$/, "")
      id = $1; sub(/_aq$/, "", id)
      if (id == "pingchang") id = "changping"
      name = toupper(substr(id, 1, 1)) substr(id, 2)
      if (index(" Aotizhongxin Changping Dingling Dongsi Guanyuan Gucheng Huairou Nongzhanguan Shunyi Tiantan Wanliu Wanshouxigong ", " " name " "))
        printf "%s,%s,%s,%s\n", name, $2, $3, $4 }'; } > "$OUT/stations.csv"
fi
