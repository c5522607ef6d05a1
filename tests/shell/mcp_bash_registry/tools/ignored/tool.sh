#!/bin/sh
echo scanned
