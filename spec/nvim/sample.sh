#!/bin/sh

# Greets its first argument.
greet() {
  echo "hello $1"
}

greet world
