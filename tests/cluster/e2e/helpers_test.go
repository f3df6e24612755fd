package e2e

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
)

func mustQuantity(value string) resource.Quantity { return resource.MustParse(value) }

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
